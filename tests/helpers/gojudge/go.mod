module clmgit.test/gojudge

go 1.26
