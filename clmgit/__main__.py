from clmgit.cli import main

main()
