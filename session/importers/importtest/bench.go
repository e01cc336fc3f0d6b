package importtest

import (
	"os"
	"testing"
	"time"

	"github.com/scrim-dev/scrim/session"
	"github.com/scrim-dev/scrim/session/importers"
)

// BenchSource measures a whole import of file, a source of src's format
// that makes want messages, into a fresh store each time: messages/s, and
// MB/s of the source's bytes (file and companions).
func BenchSource(b *testing.B, src importers.Source, file string, want int) {
	size := int64(0)
	files := []string{file}
	if src.Companions != nil {
		files = append(files, src.Companions(file)...)
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			size += fi.Size()
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var took time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := session.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		res, err := importers.ImportSource(st, src, file, nil)
		took += time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if res.Messages != want {
			b.Fatalf("%d messages, want %d", res.Messages, want)
		}
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(want)*float64(b.N)/took.Seconds(), "msgs/s")
}
