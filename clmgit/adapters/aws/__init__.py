"""AWS through boto3, one module per service: `session` (clients, retries, errors),
`cloudformation` (the engine's `StackBackend`), `autoscaling` (its `NodePoolBackend`) and `ec2`
(launch templates, the account's network). The only package that imports boto3 and botocore.

Clients come from boto3's standard configuration (profiles, roles, `AWS_ENDPOINT_URL`), in the
cluster's region, with botocore's "standard" retry mode: throttling and transient errors are
retried there, with its own backoff, and nowhere else. Waiting for stacks and instances goes
through the engine's `Clock`. Every `ClientError` leaves this package as an `ApplyError`.

moto gaps (moto 5.2), worked around in the sandbox, not here
(`sandbox/clmgit_sandbox/moto_shims.py`):
moto computes no outputs for a stack changed through a change set; has no
UpdateTerminationProtection and deletes protected stacks; accepts unknown resource types; raises
resource failures out of ExecuteChangeSet instead of failing the stack (no CREATE_FAILED events,
no rollback); reports every Auto Scaling instance at its launch template's default version;
never moves a group on `!GetAtt <template>.LatestVersionNumber` to the template's new version; and
answers concurrent CloudFormation requests in threads that race on a stack's resources.
"""
