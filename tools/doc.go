// Package tools runs an agent's tools — read, grep, glob, bash, webfetch — for
// an active model. File tools tag every piece of content with the canonical
// path it came from (Part.SourcePath, Meta.SourcePaths) and refuse paths the
// model's tier may not read; bash and webfetch never carry source paths.
package tools
