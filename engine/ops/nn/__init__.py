"""The ops of torch.nn.functional that are more than elementwise (ATen's Convolution,
Pooling, Normalization, Loss, Distance, SoftMax, Dropout, attention, UpSample, PixelShuffle,
Im2Col/Col2Im, GridSampler, LossMultiMargin/LossMultiLabelMargin, LossCTC, EmbeddingBag), one
family a file: convolution, pooling, normalization, loss, distance, softmax, dropout,
attention, upsample, pixel_shuffle, im2col, grid_sampler, multi_margin, ctc and embedding_bag."""
