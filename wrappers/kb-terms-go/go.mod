module mrpvm.example/kb-terms-go

go 1.19
