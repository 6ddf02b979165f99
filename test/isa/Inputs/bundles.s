// One bundle a line.
done
j #1
nop
lda r0, [p0, #4]
nopa ; nopb ; nops
