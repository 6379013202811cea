"""The model corpus: the models every capture and speed change is measured on, each at two sizes.

`small` configurations are tiny versions built from the same library classes (a few layers, small
hidden sizes, batches of 4 64-px images, 2 x 16 tokens) so that the CPU tests in test/python/test_corpus.py run the
same code paths in seconds; `full` are the published configurations, for benchmarks/models.py on the
GPU. All weights are random (seeded): nothing is downloaded.

    case = build("tv_resnet18", "small")        # a Case
    args, kwargs = case.inputs("train")
    loss = case.loss(case.model(*args, **kwargs), "train")

Imported by path from the test (no package): keep it free of dyn imports.
"""
import torch
import torch.nn.functional as F


class Case:
    """One corpus model with its inputs. `inputs(mode)` gives (args, kwargs) for "eval" or "train"
    (train adds the labels a model computes its own loss from); `loss(out, mode)` is the scalar that
    train mode calls backward() on."""

    def __init__(self, name, family, model, args, kwargs=None, train_kwargs=None, eval_kwargs=None,
                 labels=None, loss_from_output=False):
        self.name, self.family, self.model = name, family, model
        self.args, self.kwargs = tuple(args), dict(kwargs or {})
        self.train_kwargs, self.eval_kwargs = dict(train_kwargs or {}), dict(eval_kwargs or {})
        self.labels, self.loss_from_output = labels, loss_from_output

    def inputs(self, mode):
        extra = self.train_kwargs if mode == "train" else self.eval_kwargs
        return self.args, {**self.kwargs, **extra}

    def loss(self, out, mode="train"):
        if self.loss_from_output:
            return out["loss"]
        return F.cross_entropy(out, self.labels)

    def to(self, device, dtype=None):
        """Moves the model and its inputs to `device`; with `dtype`, the parameters and floating inputs take
        that dtype too (bfloat16 inference)."""
        def mv(v):
            if not isinstance(v, torch.Tensor):
                return v
            return v.to(device, dtype) if dtype is not None and v.is_floating_point() else v.to(device)
        self.model.to(device)
        if dtype is not None:
            self.model.to(dtype)
        self.args = tuple(mv(a) for a in self.args)
        for d in (self.kwargs, self.train_kwargs, self.eval_kwargs):
            d.update({k: mv(v) for k, v in d.items()})
        self.labels = mv(self.labels)
        return self


def _images(batch, px, classes):
    g = torch.Generator().manual_seed(1)
    return torch.randn(batch, 3, px, px, generator=g), torch.randint(0, classes, (batch,), generator=g)


def _vision(name, family, model, size, px_small=64, px_full=224, classes_small=10):
    # small: 4 images of 64 px, so that every batch-norm channel normalizes at least 16 values in train
    # mode (with fewer, 1/sqrt(var) magnifies rounding differences of decomposed ops past 1e-5)
    batch = 4 if size == "small" else 8
    x, y = _images(batch, px_small if size == "small" else px_full,
                   classes_small if size == "small" else 1000)
    return Case(name, family, model, (x,), labels=y)


# -- torchvision ---------------------------------------------------------------------------------------
def tv_resnet18(size):
    from torchvision.models import resnet
    m = resnet.ResNet(resnet.BasicBlock, [1, 1, 1, 1], num_classes=10) if size == "small" else resnet.resnet18()
    return _vision("tv_resnet18", "torchvision", m, size)


def tv_resnet50(size):
    from torchvision.models import resnet
    m = resnet.ResNet(resnet.Bottleneck, [1, 1, 1, 1], num_classes=10, width_per_group=16) \
        if size == "small" else resnet.resnet50()
    return _vision("tv_resnet50", "torchvision", m, size)


def tv_mobilenet_v3_large(size):
    from torchvision.models import mobilenetv3 as mb
    if size == "small":
        c = lambda *a: mb.InvertedResidualConfig(*a, 1.0)  # noqa: E731
        # the block kinds of the large model: plain, stride 2, squeeze-excitation, hardswish, both with residual
        setting = [c(16, 3, 16, 16, False, "RE", 1, 1), c(16, 3, 32, 24, False, "RE", 2, 1),
                   c(24, 5, 48, 40, True, "RE", 2, 1), c(40, 3, 80, 48, False, "HS", 1, 1),
                   c(48, 3, 96, 48, True, "HS", 1, 1)]
        m = mb.MobileNetV3(setting, last_channel=64, num_classes=10)
    else:
        m = mb.mobilenet_v3_large()
    return _vision("tv_mobilenet_v3_large", "torchvision", m, size)


def tv_efficientnet_b0(size):
    from torchvision.models import efficientnet as ef
    if size == "small":
        setting = [ef.MBConvConfig(1, 3, 1, 16, 8, 1), ef.MBConvConfig(6, 3, 2, 8, 16, 2),
                   ef.MBConvConfig(6, 5, 2, 16, 24, 1)]
        m = ef.EfficientNet(setting, dropout=0.2, stochastic_depth_prob=0.2, num_classes=10, last_channel=64)
    else:
        m = ef.efficientnet_b0()
    return _vision("tv_efficientnet_b0", "torchvision", m, size)


def tv_convnext_tiny(size):
    from torchvision.models import convnext as cn
    if size == "small":
        m = cn.ConvNeXt([cn.CNBlockConfig(16, 32, 1), cn.CNBlockConfig(32, None, 2)],
                        stochastic_depth_prob=0.1, num_classes=10)
    else:
        m = cn.convnext_tiny()
    return _vision("tv_convnext_tiny", "torchvision", m, size)


def tv_vit_b_16(size):
    from torchvision.models import vision_transformer as vt
    m = vt.VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
                             num_classes=10) if size == "small" else vt.vit_b_16()
    return _vision("tv_vit_b_16", "torchvision", m, size)


# -- timm ----------------------------------------------------------------------------------------------
def timm_resnet50(size):
    import timm
    m = timm.create_model("resnet50", pretrained=False, layers=(1, 1, 1, 1), num_classes=10) \
        if size == "small" else timm.create_model("resnet50", pretrained=False)
    return _vision("timm_resnet50", "timm", m, size)


def timm_vit_base(size):
    import timm
    m = timm.create_model("vit_base_patch16_224", pretrained=False, img_size=64, patch_size=16, depth=2,
                          embed_dim=32, num_heads=2, num_classes=10) \
        if size == "small" else timm.create_model("vit_base_patch16_224", pretrained=False)
    return _vision("timm_vit_base", "timm", m, size)


# -- transformers --------------------------------------------------------------------------------------
def _quiet_transformers():
    import transformers
    transformers.logging.set_verbosity_error()
    return transformers


def _tokens(batch, seq, vocab, seed=2):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (batch, seq), generator=g)


def _text_dims(size):
    return (2, 16) if size == "small" else (4, 128)


def _gpt2(attn):
    def build(size):
        tf = _quiet_transformers()
        c = tf.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=64, bos_token_id=0,
                          eos_token_id=0) if size == "small" else tf.GPT2Config()  # GPT-2 small (124M)
        m = tf.AutoModelForCausalLM.from_config(c, attn_implementation=attn)
        ids = _tokens(*_text_dims(size), c.vocab_size)
        return Case(f"hf_gpt2_{attn}", "transformers", m, (ids,), train_kwargs=dict(labels=ids),
                    loss_from_output=True)
    return build


def _bert(attn):
    def build(size):
        tf = _quiet_transformers()
        c = tf.BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                          vocab_size=128, max_position_embeddings=64) if size == "small" \
            else tf.BertConfig()  # bert-base-uncased
        m = tf.AutoModelForMaskedLM.from_config(c, attn_implementation=attn)
        batch, seq = _text_dims(size)
        ids = _tokens(batch, seq, c.vocab_size)
        mask = torch.ones(batch, seq, dtype=torch.long)
        mask[0, seq - seq // 4:] = 0  # padding in one row
        labels = torch.full_like(ids, -100)
        labels[:, ::4] = ids[:, ::4]  # the masked-LM loss on every fourth token
        return Case(f"hf_bert_{attn}", "transformers", m, (ids,), kwargs=dict(attention_mask=mask),
                    train_kwargs=dict(labels=labels), loss_from_output=True)
    return build


def _llama(attn):
    def build(size):
        tf = _quiet_transformers()
        if size == "small":
            c = tf.LlamaConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                               intermediate_size=128, vocab_size=128, max_position_embeddings=64, bos_token_id=0,
                               eos_token_id=1)
        else:  # TinyLlama-1.1B's configuration (grouped-query attention, 22 layers)
            c = tf.LlamaConfig(num_hidden_layers=22, hidden_size=2048, num_attention_heads=32, num_key_value_heads=4,
                               intermediate_size=5632, vocab_size=32000, max_position_embeddings=2048,
                               rms_norm_eps=1e-5, rope_theta=10000.0)
        m = tf.AutoModelForCausalLM.from_config(c, attn_implementation=attn)
        ids = _tokens(*_text_dims(size), c.vocab_size)
        return Case(f"hf_llama_{attn}", "transformers", m, (ids,), train_kwargs=dict(labels=ids),
                    loss_from_output=True)
    return build


def _t5(attn):
    def build(size):
        tf = _quiet_transformers()
        c = tf.T5Config(num_layers=2, num_decoder_layers=2, d_model=64, d_kv=16, num_heads=4, d_ff=128,
                        vocab_size=128, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1) \
            if size == "small" else tf.T5Config(decoder_start_token_id=0)  # t5-small (its hub config sets 0;
        # transformers 5's T5Config has no default, and train mode shifts the labels right with it)
        m = tf.AutoModelForSeq2SeqLM.from_config(c, attn_implementation=attn)
        batch, seq = _text_dims(size)
        ids = _tokens(batch, seq, c.vocab_size)
        dec = _tokens(batch, seq // 2, c.vocab_size, seed=3)
        # train: labels (the model shifts them into its decoder inputs); eval: the decoder inputs
        return Case(f"hf_t5_{attn}", "transformers", m, (ids,), eval_kwargs=dict(decoder_input_ids=dec),
                    train_kwargs=dict(labels=dec), loss_from_output=True)
    return build


BUILDERS = {
    "tv_resnet18": tv_resnet18,
    "tv_resnet50": tv_resnet50,
    "tv_mobilenet_v3_large": tv_mobilenet_v3_large,
    "tv_efficientnet_b0": tv_efficientnet_b0,
    "tv_convnext_tiny": tv_convnext_tiny,
    "tv_vit_b_16": tv_vit_b_16,
    "hf_gpt2_eager": _gpt2("eager"), "hf_gpt2_sdpa": _gpt2("sdpa"),
    "hf_bert_eager": _bert("eager"), "hf_bert_sdpa": _bert("sdpa"),
    "hf_llama_eager": _llama("eager"), "hf_llama_sdpa": _llama("sdpa"),
    "hf_t5_eager": _t5("eager"), "hf_t5_sdpa": _t5("sdpa"),
    "timm_resnet50": timm_resnet50,
    "timm_vit_base": timm_vit_base,
}
NAMES = list(BUILDERS)


def no_dropout(model):
    """Dropout and stochastic depth off (their float probabilities set to 0): compiled and eager runs then
    compute the same function (each draws its own random numbers otherwise)."""
    for m in model.modules():
        for k, v in list(vars(m).items()):
            if isinstance(v, float) and ("drop" in k.lower() or k == "p") and 0 < v < 1:
                setattr(m, k, 0.0)


def double(v):
    """v in float64 where it is a floating tensor, else v."""
    return v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v


def build(name, size="small", device="cpu", seed=0, dtype=None):
    """The model (random weights from `seed`) and its inputs, on `device` (in `dtype` where given). The
    model is left in train mode as constructed; callers set the mode."""
    torch.manual_seed(seed)
    return BUILDERS[name](size).to(device, dtype)


def tensors(out, prefix="out", depth=0, seen=None):
    """[(path, tensor)] for every tensor in a model's output: tensors, tuples, lists, dicts (ModelOutput)
    and objects holding tensors (transformers' caches), in a stable order."""
    seen = set() if seen is None else seen
    if isinstance(out, torch.Tensor):
        return [(prefix, out)]
    if out is None or depth > 6 or id(out) in seen or isinstance(out, (int, float, str, bool, torch.dtype)):
        return []
    seen.add(id(out))
    if isinstance(out, dict):
        items = [(f"{prefix}[{k!r}]", v) for k, v in out.items()]
    elif isinstance(out, (tuple, list)):
        items = [(f"{prefix}[{i}]", v) for i, v in enumerate(out)]
    elif hasattr(out, "__dict__"):
        items = [(f"{prefix}.{k}", v) for k, v in sorted(vars(out).items())]
    else:
        return []
    r = []
    for p, v in items:
        r += tensors(v, p, depth + 1, seen)
    return r
