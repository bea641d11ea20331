module example.com/push-producer

go 1.19

require github.com/gomodule/redigo v1.8.3
