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
    ('_upsample_bilinear2d_aa', 'function', 'uint8'):
        'not native: Unsupported: antialiased bilinear of a torch.uint8 tensor',
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
    ('nn.functional.avg_pool1d', 'function', 'int64'):
        'not native: Unsupported: avg_pool1d of a torch.int64 tensor',
    ('nn.functional.avg_pool2d', 'function', 'int64'):
        'not native: Unsupported: avg_pool2d of a torch.int64 tensor',
    ('nn.functional.avg_pool3d', 'function', 'int64'):
        'not native: Unsupported: avg_pool3d of a torch.int64 tensor',
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
    ('nn.functional.upsample_bilinear', 'function', 'uint8'):
        "not native: Unsupported: interpolate 'bilinear' of a torch.uint8 tensor",
    ('pow', 'function', 'int64'):
        'not native: Unsupported: pow with a torch.int64 result (graph.pow computes floats)',
    ('pow', 'function', 'uint8'):
        'not native: Unsupported: pow with a torch.uint8 result (graph.pow computes floats)',
}
