module github.com/idpbench/idpbench

go 1.26.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/spf13/pflag v1.1.0
)

require github.com/stretchr/testify v1.12.1 // indirect
