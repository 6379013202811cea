"""The integer and boolean OpInfo samples dyn does not compile natively yet (test_opinfo.py runs each
OpInfo's function variant with int64, uint8 and bool samples where the OpInfo supports them). Strict like
KNOWN_FAILURES: each must fail with the start of today's message; a fix that makes one pass fails the test
until its entry is removed. Mostly floats-only lowerings (pooling, convolutions, pow, norms and losses),
integer division by a tensor (a zero divisor raises in eager), FFTs of integers, and combining scatters of
booleans."""

# (OpInfo name, variant, dtype) -> the start of today's first failure (CPU and CUDA)
INTEGER_GAPS = {
    ('__rpow__', 'function', 'int64'):
        'not native: Unsupported: pow with a torch.int64 result (graph.pow computes floats)',
    ('__rpow__', 'function', 'uint8'):
        'not native: Unsupported: pow with a torch.uint8 result (graph.pow computes floats)',
    ('_unsafe_masked_index_put_accumulate', 'function', 'bool'):
        'not native: Unsupported: scatter sum of booleans (graph.scatter combines numbers)',
    ('_upsample_bilinear2d_aa', 'function', 'uint8'):
        'not native: Unsupported: antialiased bilinear of a torch.uint8 tensor',
    ('addr', 'function', 'bool'):
        'not native: Unsupported: addr of boolean tensors',
    ('div.floor_rounding', 'function', 'int64'):
        "not native: Unsupported: integer div (rounding_mode='floor') by a tensor (eager raises for a zero divisor)",
    ('div.floor_rounding', 'function', 'uint8'):
        "not native: Unsupported: integer div (rounding_mode='floor') by a tensor (eager raises for a zero divisor)",
    ('div.trunc_rounding', 'function', 'int64'):
        "not native: Unsupported: integer div (rounding_mode='trunc') by a tensor (eager raises for a zero divisor)",
    ('div.trunc_rounding', 'function', 'uint8'):
        "not native: Unsupported: integer div (rounding_mode='trunc') by a tensor (eager raises for a zero divisor)",
    ('fft.hfft', 'function', 'bool'):
        'not native: Unsupported: fft.hfft of a torch.bool',
    ('fft.hfft', 'function', 'int64'):
        'not native: Unsupported: fft.hfft of a torch.int64',
    ('fft.hfft', 'function', 'uint8'):
        'not native: Unsupported: fft.hfft of a torch.uint8',
    ('fft.hfft2', 'function', 'bool'):
        'not native: Unsupported: fft.hfft2 of a torch.bool',
    ('fft.hfft2', 'function', 'int64'):
        'not native: Unsupported: fft.hfft2 of a torch.int64',
    ('fft.hfft2', 'function', 'uint8'):
        'not native: Unsupported: fft.hfft2 of a torch.uint8',
    ('fft.hfftn', 'function', 'bool'):
        'not native: Unsupported: fft.hfftn of a torch.bool',
    ('fft.hfftn', 'function', 'int64'):
        'not native: Unsupported: fft.hfftn of a torch.int64',
    ('fft.hfftn', 'function', 'uint8'):
        'not native: Unsupported: fft.hfftn of a torch.uint8',
    ('fft.irfft', 'function', 'bool'):
        'not native: Unsupported: fft.irfft of a torch.bool',
    ('fft.irfft', 'function', 'int64'):
        'not native: Unsupported: fft.irfft of a torch.int64',
    ('fft.irfft', 'function', 'uint8'):
        'not native: Unsupported: fft.irfft of a torch.uint8',
    ('fft.irfft2', 'function', 'bool'):
        'not native: Unsupported: fft.irfft2 of a torch.bool',
    ('fft.irfft2', 'function', 'int64'):
        'not native: Unsupported: fft.irfft2 of a torch.int64',
    ('fft.irfft2', 'function', 'uint8'):
        'not native: Unsupported: fft.irfft2 of a torch.uint8',
    ('fft.irfftn', 'function', 'bool'):
        'not native: Unsupported: fft.irfftn of a torch.bool',
    ('fft.irfftn', 'function', 'int64'):
        'not native: Unsupported: fft.irfftn of a torch.int64',
    ('fft.irfftn', 'function', 'uint8'):
        'not native: Unsupported: fft.irfftn of a torch.uint8',
    ('floor_divide', 'function', 'int64'):
        "not native: Unsupported: integer div (rounding_mode='floor') by a tensor (eager raises for a zero divisor)",
    ('floor_divide', 'function', 'uint8'):
        "not native: Unsupported: integer div (rounding_mode='floor') by a tensor (eager raises for a zero divisor)",
    ('fmod', 'function', 'int64'):
        'not native: Unsupported: integer fmod by a tensor (eager raises for a zero divisor)',
    ('fmod', 'function', 'uint8'):
        'not native: Unsupported: integer fmod by a tensor (eager raises for a zero divisor)',
    ('gradient', 'function', 'int64'):
        'not native: Unsupported: gradient of an integer tensor',
    ('index_add', 'function', 'bool'):
        'not native: Unsupported: scatter sum of booleans (graph.scatter combines numbers)',
    ('index_add', 'function', 'uint8'):
        'not native: Unsupported: -1 does not fit in torch.uint8',
    ('nn.functional.avg_pool1d', 'function', 'int64'):
        'not native: Unsupported: avg_pool1d of a torch.int64 tensor',
    ('nn.functional.avg_pool2d', 'function', 'int64'):
        'not native: Unsupported: avg_pool2d of a torch.int64 tensor',
    ('nn.functional.avg_pool3d', 'function', 'int64'):
        'not native: Unsupported: avg_pool3d of a torch.int64 tensor',
    ('nn.functional.bilinear', 'function', 'int64'):
        'not native: Unsupported: bilinear of a torch.int64 tensor',
    ('nn.functional.bilinear', 'function', 'uint8'):
        'not native: Unsupported: bilinear of a torch.uint8 tensor',
    ('nn.functional.conv1d', 'function', 'int64'):
        'not native: Unsupported: conv1d of a torch.int64 tensor',
    ('nn.functional.conv2d', 'function', 'int64'):
        'not native: Unsupported: conv2d of a torch.int64 tensor',
    ('nn.functional.conv3d', 'function', 'int64'):
        'not native: Unsupported: conv3d of a torch.int64 tensor',
    ('nn.functional.conv_transpose1d', 'function', 'int64'):
        'not native: Unsupported: conv_transpose1d of a torch.int64 tensor',
    ('nn.functional.conv_transpose2d', 'function', 'int64'):
        'not native: Unsupported: conv_transpose2d of a torch.int64 tensor',
    ('nn.functional.conv_transpose3d', 'function', 'int64'):
        'not native: Unsupported: conv_transpose3d of a torch.int64 tensor',
    ('nn.functional.cosine_embedding_loss', 'function', 'bool'):
        'not native: Unsupported: cosine_embedding_loss of a torch.bool tensor',
    ('nn.functional.cosine_embedding_loss', 'function', 'int64'):
        'not native: Unsupported: cosine_embedding_loss of a torch.int64 tensor',
    ('nn.functional.cosine_embedding_loss', 'function', 'uint8'):
        'not native: Unsupported: cosine_embedding_loss of a torch.uint8 tensor',
    ('nn.functional.interpolate.bicubic', 'function', 'uint8'):
        "not native: Unsupported: interpolate 'bicubic' of a torch.uint8 tensor",
    ('nn.functional.interpolate.bilinear', 'function', 'uint8'):
        "not native: Unsupported: interpolate 'bilinear' of a torch.uint8 tensor",
    ('nn.functional.local_response_norm', 'function', 'int64'):
        'not native: Unsupported: local_response_norm of a torch.int64 tensor',
    ('nn.functional.max_pool2d', 'function', 'int64'):
        'not native: Unsupported: max_pool2d of a torch.int64 tensor',
    ('nn.functional.max_pool2d', 'function', 'uint8'):
        'not native: Unsupported: max_pool2d of a torch.uint8 tensor',
    ('nn.functional.max_pool3d', 'function', 'int64'):
        'not native: Unsupported: max_pool3d of a torch.int64 tensor',
    ('nn.functional.max_pool3d', 'function', 'uint8'):
        'not native: Unsupported: max_pool3d of a torch.uint8 tensor',
    ('nn.functional.pairwise_distance', 'function', 'int64'):
        'not native: Unsupported: pairwise_distance of a torch.int64 tensor',
    ('nn.functional.pairwise_distance', 'function', 'uint8'):
        'not native: Unsupported: pairwise_distance of a torch.uint8 tensor',
    ('nn.functional.poisson_nll_loss', 'function', 'int64'):
        'not native: Unsupported: poisson_nll_loss of a torch.int64 tensor',
    ('nn.functional.poisson_nll_loss', 'function', 'uint8'):
        'not native: Unsupported: poisson_nll_loss of a torch.uint8 tensor',
    ('nn.functional.softsign', 'function', 'int64'):
        'not native: Unsupported: softsign of mixed dtypes',
    ('nn.functional.softsign', 'function', 'uint8'):
        'not native: Unsupported: softsign of mixed dtypes',
    ('nn.functional.tanhshrink', 'function', 'int64'):
        'not native: Unsupported: tanhshrink of mixed dtypes',
    ('nn.functional.tanhshrink', 'function', 'uint8'):
        'not native: Unsupported: tanhshrink of mixed dtypes',
    ('nn.functional.threshold', 'function', 'int64'):
        'not native: Unsupported: threshold with a torch.int64 result',
    ('nn.functional.threshold', 'function', 'uint8'):
        'not native: Unsupported: threshold with a torch.uint8 result',
    ('nn.functional.triplet_margin_loss', 'function', 'int64'):
        'not native: Unsupported: triplet_margin_loss of a torch.int64 tensor',
    ('nn.functional.triplet_margin_loss', 'function', 'uint8'):
        'not native: Unsupported: triplet_margin_loss of a torch.uint8 tensor',
    ('nn.functional.upsample_bilinear', 'function', 'uint8'):
        "not native: Unsupported: interpolate 'bilinear' of a torch.uint8 tensor",
    ('pow', 'function', 'int64'):
        'not native: Unsupported: pow with a torch.int64 result (graph.pow computes floats)',
    ('pow', 'function', 'uint8'):
        'not native: Unsupported: pow with a torch.uint8 result (graph.pow computes floats)',
    ('put', 'function', 'bool'):
        'not native: Unsupported: scatter sum of booleans (graph.scatter combines numbers)',
    ('remainder', 'function', 'int64'):
        'not native: Unsupported: integer remainder by a tensor (eager raises for a zero divisor)',
    ('remainder', 'function', 'uint8'):
        'not native: Unsupported: integer remainder by a tensor (eager raises for a zero divisor)',
    ('scatter_add', 'function', 'bool'):
        'not native: Unsupported: scatter sum of booleans (graph.scatter combines numbers)',
    ('scatter_reduce.amax', 'function', 'bool'):
        'not native: Unsupported: scatter amax of booleans (graph.scatter combines numbers)',
    ('scatter_reduce.amin', 'function', 'bool'):
        'not native: Unsupported: scatter amin of booleans (graph.scatter combines numbers)',
    ('scatter_reduce.prod', 'function', 'bool'):
        'not native: Unsupported: scatter prod of booleans (graph.scatter combines numbers)',
    ('scatter_reduce.sum', 'function', 'bool'):
        'not native: Unsupported: scatter sum of booleans (graph.scatter combines numbers)',
    ('sum_to_size', 'function', 'uint8'):
        'not native: Unsupported: sum_to_size of an integer tensor',
    ('nn.functional.triplet_margin_with_distance_loss', 'function', 'int64'):
        'not native: Unsupported: pairwise_distance of a torch.int64 tensor',
    ('nn.functional.triplet_margin_with_distance_loss', 'function', 'uint8'):
        'not native: Unsupported: pairwise_distance of a torch.uint8 tensor',
}
