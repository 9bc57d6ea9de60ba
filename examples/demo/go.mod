module github.com/acme/shorty

go 1.26
