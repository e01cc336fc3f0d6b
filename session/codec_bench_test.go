package session

import (
	"testing"
)

// BenchmarkMarshalMessage is the encoding half of a bulk append: realistic
// messages (mostly code, so tabs and newlines to escape) to JSON.
func BenchmarkMarshalMessage(b *testing.B) {
	msgs := benchMessages(2000)
	var n int64
	for _, m := range msgs {
		v, err := marshalMessage(m)
		if err != nil {
			b.Fatal(err)
		}
		n += int64(len(v))
	}
	b.SetBytes(n / int64(len(msgs)))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := marshalMessage(msgs[i%len(msgs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalMessage is what every read pays per message: realistic
// records (mostly code, so tabs and newlines escaped) decoded.
func BenchmarkUnmarshalMessage(b *testing.B) {
	msgs := benchMessages(2000)
	recs := make([][]byte, len(msgs))
	var n int64
	for i, m := range msgs {
		v, err := marshalMessage(m)
		if err != nil {
			b.Fatal(err)
		}
		recs[i], n = v, n+int64(len(v))
	}
	b.SetBytes(n / int64(len(msgs)))
	for i := 0; b.Loop(); i++ {
		var m Message
		if err := unmarshalMessage(recs[i%len(recs)], &m); err != nil {
			b.Fatal(err)
		}
	}
}
