"""The outside world, one module per party: git (`git`, one runner; `gitobjects`), GitHub's REST
API (`github`), Kubernetes (`kube`) and AWS (`aws`). They speak the SDKs and protocols, are the
real side of clmgit's seams and return its own values; what to change is not theirs to decide.
git runs as a process through `git.run_git` alone; nothing else imports boto3 or kubernetes, but for
the boto3 session of `convert/ec2.py`.
"""
