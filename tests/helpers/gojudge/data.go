package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	types "clmgit.test/gojudge/ec2types"
)

// Cluster and NodePool carry the field names CLM's templates use (.Cluster.LocalID, ...).
type Cluster struct {
	ID                    string
	Alias                 string
	LocalID               string
	InfrastructureAccount string
	Region                string
	APIServerURL          string
	Environment           string
	Channel               string
	Provider              string
	CriticalityLevel      int32
	LifecycleStatus       string
	Owner                 string
	ConfigItems           map[string]string
	NodePools             []*NodePool
}

type NodePool struct {
	Name             string
	Profile          string
	InstanceTypes    []InstanceType
	DiscountStrategy string
	MinSize          int64
	MaxSize          int64
	ConfigItems      map[string]string
}

// InstanceType is EC2's types.InstanceType (see ec2types/types.go).
type InstanceType = types.InstanceType

// Instance is the shape of an instance type's facts as templates read them (CLM's aws.Instance).
type Instance struct {
	InstanceType              InstanceType
	VCPU                      int32
	Memory                    int64
	InstanceStorageDevices    int64
	InstanceStorageDeviceSize int64
	Architecture              string
}

func decodeData(raw json.RawMessage) (interface{}, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var generic interface{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	top, ok := generic.(map[string]interface{})
	if !ok {
		return convert(generic)
	}
	data := map[string]interface{}{}
	for key, value := range top {
		var err error
		switch key {
		case "Cluster":
			data[key], err = typed(value, &Cluster{})
		case "NodePool":
			data[key], err = typed(value, &NodePool{})
		default:
			data[key], err = convert(value)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	return data, nil
}

// typed re-decodes value into target; a JSON null stays a nil pointer of the target's type.
func typed[T any](value interface{}, target *T) (*T, error) {
	if value == nil {
		return nil, nil
	}
	encoded, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(encoded, target); err != nil {
		return nil, err
	}
	return target, nil
}

func convert(value interface{}) (interface{}, error) {
	switch v := value.(type) {
	case json.Number:
		if !strings.ContainsAny(v.String(), ".eE") {
			n, err := v.Int64()
			return int(n), err
		}
		return v.Float64()
	case []interface{}:
		out := make([]interface{}, len(v))
		for i, item := range v {
			c, err := convert(item)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]interface{}:
		if goType, ok := v["__go"].(string); ok {
			return withType(goType, v["v"])
		}
		out := make(map[string]interface{}, len(v))
		for key, item := range v {
			c, err := convert(item)
			if err != nil {
				return nil, err
			}
			out[key] = c
		}
		return out, nil
	default:
		return v, nil
	}
}

func withType(goType string, value interface{}) (interface{}, error) {
	switch goType {
	case "nil":
		return nil, nil
	case "float64":
		n, ok := value.(json.Number)
		if !ok {
			return nil, fmt.Errorf("float64 wants a number, got %v", value)
		}
		return n.Float64()
	case "map[string]string":
		out := map[string]string{}
		_, err := typed(value, &out)
		return out, err
	case "Instance":
		return typed(value, &Instance{})
	}
	return nil, fmt.Errorf("unknown __go type %q", goType)
}
