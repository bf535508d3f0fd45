// gojudge answers with real Go what clmgit's tests must agree with: text/template output and
// compress/gzip bytes. Standard library only; it is a test judge, not part of clmgit.
//
//	gojudge gzip    < text              > Go's gzip of text (gzip.NewWriter, default level)
//	gojudge render  < [{"template", "data"}, ...]   > [{"output"} | {"error"}, ...]
//
// In render's data an object {"__go": TYPE, "v": VALUE} gives a value a Go type (float64,
// map[string]string, nil, Instance); "Cluster" and "NodePool" become structs with CLM's field
// names; integers are int, other numbers float64. Templates run with missingkey=error.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/template"
)

func main() {
	if len(os.Args) != 2 {
		fail("usage: gojudge gzip|render")
	}
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err.Error())
	}
	switch os.Args[1] {
	case "gzip":
		err = writeGzip(input)
	case "render":
		err = renderAll(input)
	default:
		fail("unknown mode " + os.Args[1])
	}
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "gojudge:", msg)
	os.Exit(2)
}

func writeGzip(text []byte) error {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(text); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	_, err := os.Stdout.Write(buf.Bytes())
	return err
}

type request struct {
	Template string          `json:"template"`
	Data     json.RawMessage `json:"data"`
}

type answer struct {
	Output *string `json:"output,omitempty"`
	Error  *string `json:"error,omitempty"`
}

func renderAll(input []byte) error {
	var requests []request
	if err := json.Unmarshal(input, &requests); err != nil {
		return err
	}
	answers := make([]answer, len(requests))
	for i, r := range requests {
		out, err := renderOne(r)
		if err != nil {
			msg := err.Error()
			answers[i].Error = &msg
		} else {
			answers[i].Output = &out
		}
	}
	return json.NewEncoder(os.Stdout).Encode(answers)
}

func renderOne(r request) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	data, err := decodeData(r.Data)
	if err != nil {
		return "", err
	}
	t, err := template.New("t").Option("missingkey=error").Funcs(funcs()).Parse(r.Template)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}
