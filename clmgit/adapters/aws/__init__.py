"""AWS through boto3, a module per service: `session` (clients in the cluster's region, botocore's
standard retries, errors as `ApplyError`), `cloudformation` (the engine's `StackBackend`),
`autoscaling` (its `NodePoolBackend`), `ec2` (launch templates, the account's network), and what
CLM's templates ask while rendering: `clmaccount` (VPC, KMS, ACM, S3, AMIs, instance types). Waits
go through the engine's `Clock`. Where moto differs from AWS, the sandbox patches moto
(`clmgit_sandbox.moto_shims`), never this package.
"""
