module github.com/meshreg/meshreg/hack/ratioplot

go 1.26
