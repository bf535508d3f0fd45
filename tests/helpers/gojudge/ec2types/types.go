// Package types (in ec2types/, as EC2's SDK names it) holds the judge's stand-in of EC2's types.InstanceType, in a package of that
// name so that fmt names it as Go names CLM's (`%!d(types.InstanceType=m5.large)`).
package types

// InstanceType is a named string type: Go passes it to a function only as a constant or a
// value of that type.
type InstanceType string
