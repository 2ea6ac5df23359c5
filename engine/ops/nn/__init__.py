"""The ops of torch.nn.functional that are more than elementwise (ATen's Convolution,
Pooling, Normalization, Loss, Distance, SoftMax, Dropout, attention, UpSample), one family
a file: convolution, pooling, normalization, loss, distance, softmax, dropout, attention
and upsample."""
