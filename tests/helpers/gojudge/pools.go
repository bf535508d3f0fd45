package main

// NodePool's methods as CLM's templates call them, written for this judge from CLM's
// documented behaviour (api/node_pool.go, pkg/kubernetes ParseTaint): a method on the struct,
// so that printing, len, range and eq see Go's own types (pointers, nil slices).

import "strings"

// TaintEffect and Taint have the shape of Kubernetes' core/v1 Taint.
type TaintEffect string

type Taint struct {
	Key       string
	Value     string
	Effect    TaintEffect
	TimeAdded *string
}

// Requirement has the shape of client-go's NodeSelectorRequirementApplyConfiguration: Key and
// Operator are pointers, nil when not written.
type Requirement struct {
	Key      *string
	Operator *string
	Values   []string
}

func (np NodePool) IsSpot() bool {
	return np.DiscountStrategy == "spot" || np.DiscountStrategy == "spot_max_price"
}

func (np NodePool) IsMaster() bool { return strings.Contains(np.Profile, "master") }

func (np NodePool) IsKarpenter() bool { return np.Profile == "worker-karpenter" }

func (np NodePool) KarpenterInstanceTypeStrategy() string {
	if len(np.InstanceTypes) == 1 {
		switch np.InstanceTypes[0] {
		case "not-specified", "default-for-karpenter":
			return string(np.InstanceTypes[0])
		}
	}
	return "custom"
}

// Taints: nil without the item; each comma-separated part parsed, invalid ones left out.
func (np NodePool) Taints() []*Taint {
	conf, ok := np.ConfigItems["taints"]
	if !ok {
		return nil
	}
	var taints []*Taint
	for _, spec := range strings.Split(conf, ",") {
		if t := parseTaint(spec); t != nil {
			taints = append(taints, t)
		}
	}
	return taints
}

// parseTaint: "key" (no "="), or "key[=value]:Effect" with one of three effects.
func parseTaint(spec string) *Taint {
	parts := strings.Split(spec, ":")
	switch len(parts) {
	case 1:
		if strings.Contains(spec, "=") {
			return nil
		}
		return &Taint{Key: spec}
	case 2:
		effect := TaintEffect(parts[1])
		if effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute" {
			return nil
		}
		kv := strings.Split(parts[0], "=")
		if len(kv) > 2 {
			return nil
		}
		t := &Taint{Key: kv[0], Effect: effect}
		if len(kv) == 2 {
			t.Value = kv[1]
		}
		return t
	}
	return nil
}

// KarpenterRequirements: nil without the item; see yaml.go for the YAML this judge reads.
func (np NodePool) KarpenterRequirements() []Requirement {
	conf, ok := np.ConfigItems["requirements"]
	if !ok {
		return nil
	}
	return parseRequirements(conf)
}

// MemoryFraction and AvailableStorage: CLM's aws.Instance methods (pkg/aws/instance_info.go).
func (i Instance) MemoryFraction(percent int64) int64 { return percent * i.Memory / 100 }

func (i Instance) AvailableStorage(storageScale float64, rootSize int64, rootScale float64) int64 {
	if i.InstanceStorageDevices == 0 {
		return int64(float64(rootSize) * rootScale)
	}
	return int64(storageScale * float64(i.InstanceStorageDevices*i.InstanceStorageDeviceSize))
}
