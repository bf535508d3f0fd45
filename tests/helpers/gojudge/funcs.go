package main

import (
	"encoding/base64"
	"fmt"
	"strings"
	"text/template"
)

// funcs is the judge's function map: a few of CLM's functions, written for these tests from
// CLM's documented behaviour (provisioner/template.go), so that cases can shadow and call them.
// A template calling anything else fails to parse, which the tests report as the judge's error.
func funcs() template.FuncMap {
	return template.FuncMap{
		"base64": func(value string) string {
			return base64.StdEncoding.EncodeToString([]byte(value))
		},
		// instanceTypeCPUQuantity: the vCPUs of a type, as a string; the types known here are
		// those of the tests' data (clmgit's offline EC2 answers the same).
		"instanceTypeCPUQuantity": func(t InstanceType) (string, error) {
			vcpus, ok := map[InstanceType]int32{"m5.large": 2, "m5.xlarge": 4, "m6g.large": 2}[t]
			if !ok {
				return "", fmt.Errorf("unknown instance type %s", t)
			}
			return fmt.Sprintf("%d", vcpus), nil
		},
		// split: strings.Split, except that an empty string has no parts (a nil slice).
		"split": func(s, sep string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, sep)
		},
	}
}
