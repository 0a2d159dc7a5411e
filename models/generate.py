"""Generate the model corpus: the scripts under models/<corpus>/ that are not written by hand.

    python models/generate.py            # (re)write the generated scripts and models/INDEX.md
    python models/generate.py --check    # exit 1 if a generated file on disk differs
    python models/generate.py --list     # print the generated scripts (corpus/file)
    python models/generate.py --survey timm   # recount candidates (needs the libraries)

The scripts follow the template of models/README.md (labels line, docstring with the source,
``torch.manual_seed(0)``, ``parse()`` with TurnkeyML's parameter names, random weights,
``model.eval()``, keyword ``inputs``, one call under ``torch.no_grad()``). What is generated is
written down below as plain tables (one row per script): rendering them needs neither torch nor
the model libraries, so ``--check`` is cheap and the output is deterministic. The parameter
counts in the tables were measured once (``sum(p.numel() for p in model.parameters())``, on
``torch.device("meta")`` where the model can be built there) with the versions pinned in
models/requirements.txt; ``--survey timm|torchvision|transformers`` (needs the libraries) prints
the candidates again, for updating the tables after an upgrade.

Hand-written scripts (the files that exist but are not in the tables, e.g. models/timm/resnet18.py)
are never overwritten: a table row whose file is hand-written is skipped.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

MODELS = Path(__file__).resolve().parent
WIDTH = 100  # ruff's line length (pyproject.toml)

#: the hand-written scripts: never generated, never overwritten
HAND_WRITTEN = {
    "selftest": ["attention", "conv", "embedding", "inference_mode", "linear", "lstm", "mlp",
                 "multi_input", "no_batch", "two_models"],
    "timm": ["convnext_atto", "deit_tiny_patch16_224", "efficientnet_b0",
             "mobilenetv3_small_100", "regnetx_002", "resnet18", "vit_tiny_patch16_224"],
    "torchvision": ["convnext_tiny", "densenet121", "efficientnet_b0", "googlenet", "mnasnet0_5",
                    "mobilenet_v2", "mobilenet_v3_small", "regnet_y_400mf", "resnet18",
                    "resnet50", "shufflenet_v2_x1_0", "squeezenet1_1", "vit_b_16"],
    "transformers": ["albert", "bart", "bert", "distilbert", "electra_small", "gpt2",
                     "mobilebert", "roberta", "t5_small_encoder", "vit"],
}

IMAGE = ["batch_size", "num_channels", "height", "width"]
TEXT = ["batch_size", "max_seq_length"]


@dataclass
class Script:
    """One generated script: where it goes, what it says and what it runs."""

    corpus: str
    name: str                      # file stem == labels name
    labels: dict[str, str]         # after name (author, task, family, kind, ...)
    doc: str                       # docstring paragraphs (wrapped here), without the source
    source: str                    # URL
    imports: list[str]             # third-party modules besides torch
    params: list[str]              # parse() names
    model: str                     # code building `model` (and what it needs)
    inputs: dict[str, str]         # input name -> expression
    classes: str = ""              # module-level code before parse() (model classes)
    after_parse: str = ""          # code right after parse() (checks, fixed sizes)
    title: str = ""                # short description for INDEX.md
    n_params: int = 0
    input_desc: str = ""           # default inputs for INDEX.md
    pre_inputs: str = ""           # code between model.eval() and inputs
    mlprof_imports: list[str] = field(default_factory=list)  # lines after the parser import

    @property
    def path(self) -> Path:
        return MODELS / self.corpus / f"{self.name}.py"

    def render(self) -> str:
        labels = " ".join(f"{k}::{v}" for k, v in {"name": self.name, **self.labels}.items())
        paras = [textwrap.fill(p, WIDTH - 4, break_on_hyphens=False, break_long_words=False)
                 for p in self.doc.strip().split("\n\n")]
        out = [f"# labels: {labels}"]
        if len(out[0]) > WIDTH:  # the labels must stay on the first line
            out.append("# ruff: noqa: E501")
        out += ['"""', "\n\n".join(paras), "", f"Source: {self.source}",
               '"""']
        mods = sorted({"torch", *self.imports})
        out += [f"import {m}" for m in mods]
        out += ["", *self.mlprof_imports, "from mlprof.parser import parse", "",
                "torch.manual_seed(0)", ""]
        if self.classes:
            out += ["", self.classes.strip("\n"), "", ""]
        example = {"batch_size": "--batch_size 8"}
        out.append(f"# parameters (TurnkeyML's standard names): python {self.name}.py "
                   f"{example['batch_size']}")
        names = ", ".join(f'"{p}"' for p in self.params)
        lhs = ", ".join(self.params) if len(self.params) > 1 else f"({self.params[0]},)"
        line = f"{lhs} = parse([{names}])"
        if len(line) > WIDTH:
            line = f"{lhs} = parse(\n    [{names}]\n)"
        out.append(line)
        if self.after_parse:
            out.append(self.after_parse.strip("\n"))
        out += ["", "# model and inputs", self.model.strip("\n"), "model.eval()"]
        if self.pre_inputs:
            out.append(self.pre_inputs.strip("\n"))
        items = [f'"{k}": {v}' for k, v in self.inputs.items()]
        one = "inputs = {" + ", ".join(items) + "}"
        if len(one) <= WIDTH:
            out.append(one)
        else:
            out += ["inputs = {", *[f"    {i}," for i in items], "}"]
        out += ["", "# call the model", "with torch.no_grad():", "    model(**inputs)", ""]
        return "\n".join(out)


def call(func: str, args: list[str], indent: str = "") -> str:
    """``func(args)`` on one line if it fits, else one argument per line."""
    one = f"{indent}{func}({', '.join(args)})"
    if len(one) <= WIDTH:
        return one
    inner = "".join(f"{indent}    {a},\n" for a in args)
    return f"{indent}{func}(\n{inner}{indent})"


def millions(n: int) -> str:
    return f"{n / 1e6:.1f}M"


def image_input(name: str = "x") -> dict[str, str]:
    return {name: "torch.rand(batch_size, num_channels, height, width)"}


# ------------------------------------------------------------------------------------------------
# timm: every model family (module of timm.models), its smallest variant and the smallest variant
# of each architecture in it (name prefix: resnet, seresnext, ecaresnet, ...), <= 100M parameters
# (vgg and gemma4_vit have nothing smaller and are kept; deepseek_vit, 412M, is left out). timm's
# test_* models (tiny test configurations) are not included.
# Columns: model name, module (family), parameters, timm's default input height and width
# (pretrained_cfg["input_size"]), fixed_input_size (position embeddings tied to the image size:
# the model is built for the requested size with img_size=(height, width)); parameter counts at
# 224x224, the scripts' default (position embeddings depend on the size).

TIMM = [
    ("beit_base_patch16_224", "beit", 86530984, 224, 224, True),
    ("beitv2_base_patch16_224", "beit", 86530984, 224, 224, True),
    ("halonet_h1", "byoanet", 8100056, 256, 256, False),
    ("eca_botnext26ts_256", "byoanet", 10592981, 256, 256, True),
    ("lambda_resnet26t", "byoanet", 10958272, 256, 256, False),
    ("haloregnetz_b", "byoanet", 11680072, 224, 224, False),
    ("botnet26t_256", "byoanet", 12486624, 256, 256, True),
    ("sehalonet33ts", "byoanet", 13691712, 256, 256, False),
    ("sebotnet33ts_256", "byoanet", 13699424, 256, 256, True),
    ("lamhalobotnet50ts_256", "byoanet", 22569824, 256, 256, True),
    ("halo2botnet50ts_256", "byoanet", 22635360, 256, 256, True),
    ("mobileone_s1", "byobnet", 4825192, 224, 224, False),
    ("gernet_s", "byobnet", 8173761, 224, 224, False),
    ("repvgg_a0", "byobnet", 9108968, 224, 224, False),
    ("regnetz_b16", "byobnet", 9715480, 224, 224, False),
    ("resnext26ts", "byobnet", 10297952, 256, 256, False),
    ("eca_resnext26ts", "byobnet", 10297988, 256, 256, False),
    ("seresnext26ts", "byobnet", 10388064, 256, 256, False),
    ("gcresnext26ts", "byobnet", 10476600, 256, 256, False),
    ("bat_resnext26ts", "byobnet", 10731200, 256, 256, False),
    ("resnet32ts", "byobnet", 17963616, 256, 256, False),
    ("seresnet33ts", "byobnet", 19779200, 256, 256, False),
    ("gcresnet33ts", "byobnet", 19880698, 256, 256, False),
    ("cait_xxs24_224", "cait", 11956264, 224, 224, True),
    ("coat_tiny", "coat", 5498540, 224, 224, True),
    ("convit_tiny", "convit", 5710512, 224, 224, True),
    ("convmixer_768_32", "convmixer", 21110248, 224, 224, False),
    ("convnext_zepto_rms", "convnext", 2155656, 224, 224, False),
    ("convnextv2_atto", "convnext", 3708400, 224, 224, False),
    ("cpubone_nano", "cpubone", 6519700, 224, 224, False),
    ("crossvit_tiny_240", "crossvit", 7014800, 240, 240, True),
    ("csatv2", "csatv2", 11103444, 512, 512, False),
    ("cs3darknet_focus_s", "cspnet", 3274728, 256, 256, False),
    ("darknet17", "cspnet", 14304840, 256, 256, False),
    ("cspresnext50", "cspnet", 20569896, 256, 256, False),
    ("sedarknet21", "cspnet", 20950432, 256, 256, False),
    ("cspresnet50", "cspnet", 21616168, 256, 256, False),
    ("cspdarknet53", "cspnet", 27642184, 256, 256, False),
    ("darknetaa53", "cspnet", 36022984, 256, 256, False),
    ("cspnext_tiny", "cspnext", 2733700, 224, 224, False),
    ("davit_tiny", "davit", 28360168, 224, 224, False),
    ("deit_tiny_patch16_224", "deit", 5717416, 224, 224, True),
    ("densenet121", "densenet", 7978856, 224, 224, False),
    ("densenetblur121d", "densenet", 7998088, 224, 224, False),
    ("dla46x_c", "dla", 1068440, 224, 224, False),
    ("dpn48b", "dpn", 9126226, 224, 224, False),
    ("edgenext_xx_small", "edgenext", 1327216, 256, 256, False),
    ("efficientformer_l1", "efficientformer", 12289928, 224, 224, True),
    ("efficientformerv2_s0", "efficientformer_v2", 3600256, 224, 224, True),
    ("mobilenetv2_035", "efficientnet", 1677128, 224, 224, False),
    ("mnasnet_small", "efficientnet", 2030264, 224, 224, False),
    ("tinynet_e", "efficientnet", 2042972, 106, 106, False),
    ("semnasnet_050", "efficientnet", 2082006, 224, 224, False),
    ("mobilenet_edgetpu_100", "efficientnet", 4091432, 224, 224, False),
    ("mixnet_s", "efficientnet", 4134606, 224, 224, False),
    ("spnasnet_100", "efficientnet", 4421616, 224, 224, False),
    ("efficientnet_lite0", "efficientnet", 4652008, 224, 224, False),
    ("fbnetc_100", "efficientnet", 5572200, 224, 224, False),
    ("tf_efficientnetv2_b0", "efficientnet", 7139704, 192, 192, False),
    ("gc_efficientnetv2_rw_t", "efficientnet", 13677713, 224, 224, False),
    ("efficientvim_m1", "efficientvim", 6679458, 224, 224, False),
    ("efficientvit_b0", "efficientvit_mit", 3410008, 224, 224, False),
    ("efficientvit_m0", "efficientvit_msra", 2349436, 224, 224, True),
    ("vit_tiny_patch16_dinov3_qkvb", "eva", 5489664, 256, 256, True),
    ("eva02_tiny_patch14_224", "eva", 5502144, 224, 224, True),
    ("fasternet_t0", "fasternet", 3905500, 224, 224, False),
    ("fastvit_t8", "fastvit", 4026232, 256, 256, False),
    ("focalnet_tiny_srf", "focalnet", 28427116, 224, 224, False),
    ("gcvit_xxtiny", "gcvit", 11995428, 224, 224, True),
    ("gemma4_vit_167m", "gemma4_vit", 167364608, 768, 768, False),
    ("ghostnet_050", "ghostnet", 2587292, 224, 224, False),
    ("ghostnetv3_050", "ghostnet", 3395384, 224, 224, False),
    ("hardcorenas_b", "hardcorenas", 5176544, 224, 224, False),
    ("hgnetv2_b0", "hgnet", 5996550, 224, 224, False),
    ("hgnet_tiny", "hgnet", 14735864, 224, 224, False),
    ("hiera_tiny_224", "hiera", 27910216, 224, 224, True),
    ("sam2_hiera_tiny", "hieradet_sam2", 26851008, 896, 896, False),
    ("hieradet_small", "hieradet_sam2", 34730344, 256, 256, False),
    ("hrnet_w18_small", "hrnet", 13187464, 224, 224, False),
    ("iformer_t", "iformer", 2886456, 224, 224, False),
    ("inception_next_atto", "inception_next", 4156520, 224, 224, False),
    ("inception_resnet_v2", "inception_resnet_v2", 55843464, 299, 299, False),
    ("inception_v3", "inception_v3", 23834568, 299, 299, False),
    ("inception_v4", "inception_v4", 42679816, 299, 299, False),
    ("lcnetv2_small", "lcnetv2", 4128552, 224, 224, False),
    ("levit_128s", "levit", 7777058, 224, 224, True),
    ("lowformer_b0", "lowformer", 14100472, 224, 224, False),
    ("mambaout_femto", "mambaout", 7304536, 224, 224, False),
    ("maxvit_pico_rw_256", "maxxvit", 7453292, 256, 256, True),
    ("coatnet_pico_rw_224", "maxxvit", 10851364, 224, 224, True),
    ("coatnext_nano_rw_224", "maxxvit", 14701244, 224, 224, True),
    ("maxxvit_rmlp_nano_rw_256", "maxxvit", 16779628, 256, 256, True),
    ("maxxvitv2_nano_rw_256", "maxxvit", 23692411, 256, 256, True),
    ("poolformerv2_s12", "metaformer", 11891712, 224, 224, False),
    ("poolformer_s12", "metaformer", 11915176, 224, 224, False),
    ("caformer_s18", "metaformer", 26341656, 224, 224, False),
    ("convformer_s18", "metaformer", 26774448, 224, 224, False),
    ("gmlp_ti16_224", "mlp_mixer", 5867328, 224, 224, True),
    ("gmixer_12_224", "mlp_mixer", 12701080, 224, 224, True),
    ("resmlp_12_224", "mlp_mixer", 15350872, 224, 224, True),
    ("mixer_s16_224", "mlp_mixer", 18528264, 224, 224, True),
    ("mobilenetv3_small_050", "mobilenetv3", 1593224, 224, 224, False),
    ("lcnet_035", "mobilenetv3", 1644370, 224, 224, False),
    ("fbnetv3_b", "mobilenetv3", 8598464, 224, 224, False),
    ("mobilenetv5_base", "mobilenetv5", 82647976, 256, 256, False),
    ("mobilevit_xxs", "mobilevit", 1272024, 256, 256, False),
    ("mobilevitv2_050", "mobilevit", 1370593, 256, 256, False),
    ("mvitv2_tiny", "mvitv2", 24173320, 224, 224, True),
    ("naflexvit_base_patch16_parfac_gap", "naflexvit", 86461672, 384, 384, False),
    ("nasnetalarge", "nasnet", 88753150, 331, 331, False),
    ("nest_tiny", "nest", 17057608, 224, 224, True),
    ("nextvit_small", "nextvit", 31763368, 224, 224, False),
    ("nf_regnet_b0", "nfnet", 8764288, 192, 192, False),
    ("eca_nfnet_l0", "nfnet", 24143924, 224, 224, False),
    ("nfnet_l0", "nfnet", 35074488, 224, 224, False),
    ("dm_nfnet_f0", "nfnet", 71489284, 192, 192, False),
    ("pit_ti_224", "pit", 4847272, 224, 224, True),
    ("pnasnet5large", "pnasnet", 86057668, 331, 331, False),
    ("pvt_v2_b0", "pvt_v2", 3666760, 224, 224, False),
    ("qwen3_vit_88m", "qwen3_vit", 87414528, 768, 768, False),
    ("rdnet_tiny", "rdnet", 23863008, 224, 224, False),
    ("regnetx_002", "regnet", 2684792, 224, 224, False),
    ("regnety_002", "regnet", 3162996, 224, 224, False),
    ("regnetz_005", "regnet", 7122742, 224, 224, False),
    ("regnetv_040", "regnet", 20640640, 224, 224, False),
    ("repghostnet_050", "repghost", 2313968, 224, 224, False),
    ("repvit_m1", "repvit", 5485248, 224, 224, False),
    ("res2next50", "res2net", 24671464, 224, 224, False),
    ("resnest14d", "resnest", 10611688, 224, 224, False),
    ("resnet10t", "resnet", 5435488, 176, 176, False),
    ("resnetblur18", "resnet", 11689512, 224, 224, False),
    ("seresnet18", "resnet", 11779624, 224, 224, False),
    ("ecaresnext26t_32x4d", "resnet", 15406220, 224, 224, False),
    ("ecaresnet26t", "resnet", 16011916, 256, 256, False),
    ("seresnext26t_32x4d", "resnet", 16806976, 224, 224, False),
    ("resnetaa34d", "resnet", 21816904, 224, 224, False),
    ("resnext50_32x4d", "resnet", 25028904, 224, 224, False),
    ("seresnetaa50d", "resnet", 28107256, 224, 224, False),
    ("ecaresnetlight", "resnet", 30162046, 224, 224, False),
    ("resnetrs50", "resnet", 35691912, 160, 160, False),
    ("wide_resnet50_2", "resnet", 68883240, 224, 224, False),
    ("seresnextaa101d_32x8d", "resnet", 93588280, 288, 288, False),
    ("resnetv2_18", "resnetv2", 11687720, 224, 224, False),
    ("rexnet_100", "rexnet", 4796873, 224, 224, False),
    ("rexnetr_100", "rexnet", 4883304, 224, 224, False),
    ("selecsls42", "selecsls", 30354952, 224, 224, False),
    ("legacy_seresnet18", "senet", 11778592, 224, 224, False),
    ("legacy_seresnext26_32x4d", "senet", 16790280, 224, 224, False),
    ("sequencer2d_s", "sequencer", 27651688, 224, 224, True),
    ("shvit_s1", "shvit", 6330808, 224, 224, False),
    ("skresnet18", "sknet", 11958056, 224, 224, False),
    ("skresnext50_32x4d", "sknet", 27479784, 224, 224, False),
    ("starnet_s050", "starnet", 542728, 224, 224, False),
    ("swiftformer_xs", "swiftformer", 3475360, 224, 224, True),
    ("swin_tiny_patch4_window7_224", "swin_transformer", 28288354, 224, 224, True),
    ("swinv2_tiny_window16_256", "swin_transformer_v2", 28347154, 256, 256, True),
    ("swinv2_cr_tiny_224", "swin_transformer_v2_cr", 28332124, 224, 224, True),
    ("tiny_vit_5m_224", "tiny_vit", 12082725, 224, 224, False),
    ("tnt_s_legacy_patch16_224", "tnt", 23755336, 224, 224, True),
    ("tresnet_m", "tresnet", 31389032, 224, 224, False),
    ("twins_svt_small", "twins", 24060776, 224, 224, True),
    ("vgg11", "vgg", 132863336, 224, 224, False),
    ("visformer_tiny", "visformer", 10321368, 224, 224, True),
    ("vit_tiny_patch16_224", "vision_transformer", 5717416, 224, 224, True),
    ("flexivit_small", "vision_transformer", 22050280, 240, 240, True),
    ("beit3_base_patch16_224", "vision_transformer", 86659816, 224, 224, True),
    ("vit_tiny_r_s16_p8_224", "vision_transformer_hybrid", 6337704, 224, 224, True),
    ("vit_srelpos_small_patch16_224", "vision_transformer_relpos", 21973486, 224, 224, True),
    ("samvit_base_patch16_224", "vision_transformer_sam", 86457064, 224, 224, True),
    ("vitamin_small_224", "vitamin", 22173376, 224, 224, True),
    ("volo_d1_224", "volo", 26632040, 224, 224, True),
    ("ese_vovnet19b_slim_dw", "vovnet", 1897752, 224, 224, False),
    ("vovnet39a", "vovnet", 22600296, 224, 224, False),
    ("eca_vovnet39b", "vovnet", 22600316, 224, 224, False),
    ("legacy_xception", "xception", 22855952, 299, 299, False),
    ("xception41p", "xception_aligned", 26907752, 299, 299, False),
    ("xcit_nano_12_p8_224", "xcit", 3049016, 224, 224, True),
]

#: timm models that take img_size=(height, width) but need something special
TIMM_SPECIAL: dict[str, str] = {
    # halo attention needs feature maps divisible by its block size: 256x256 inputs
    "bat_resnext26ts": "size:256x256",
    "halo2botnet50ts_256": "size:256x256",
    "halonet_h1": "size:256x256",
    "lamhalobotnet50ts_256": "size:256x256",
    "sehalonet33ts": "size:256x256",
    # two branches (patch 12 and 16) whose token counts only agree at the trained size
    "crossvit_tiny_240": "size:240x240",
}


def timm_scripts() -> Iterator[Script]:
    for name, module, n, h, w, fixed in TIMM:
        args = [f'"{name}"', "pretrained=False", "in_chans=num_channels"]
        doc = [f"`{name}` from timm (family `{module}`: timm/models/{module}.py), random "
               f"weights, {n:,} parameters."]
        after = ""
        special = TIMM_SPECIAL.get(name, "fixed" if fixed else "")
        if special == "fixed":
            args.append("img_size=(height, width)")
            doc.append("The model is built for the input size (img_size=(height, width)): its "
                       "position embeddings (or attention windows) are tied to the image size, "
                       "so height and width must be multiples of its patch size (or window "
                       "size).")
        elif special.startswith("size:"):
            fh, fw = special[5:].split("x")
            after = (f"height, width = {fh}, {fw}  # this model only runs at {fh}x{fw}: "
                     "--height/--width are ignored")
            doc.append(f"This model does not run at 224x224 (its attention layers need the "
                       f"feature-map sizes of its native input), so the script sets height and "
                       f"width to {fh}x{fw}, its native size, and ignores --height/--width.")
        if (h, w) != (224, 224) and not special.startswith("size:"):
            doc.append(f"timm's default input size for this model is 3x{h}x{w} (its "
                       f"pretrained_cfg); the script uses --height/--width (default 224x224), "
                       f"pass --height {h} --width {w} for the native size.")
        size = special[5:] if special.startswith("size:") else "224x224"
        yield Script(
            corpus="timm", name=name,
            labels={"author": "timm", "task": "computer_vision", "family": module,
                    "kind": "classification"},
            doc="\n\n".join(doc),
            source=f"https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/"
                   f"{module}.py",
            imports=["timm"], params=IMAGE, after_parse=after,
            model=call("model = timm.create_model", args),
            inputs=image_input(), title=f"timm {name} ({module})", n_params=n,
            input_desc=f"`x` 1x3x{size} float32",
        )


# ------------------------------------------------------------------------------------------------
# torchvision: classification (torchvision.models), detection, segmentation and video models,
# weights=None (and weights_backbone=None: detection and segmentation builders otherwise download
# ImageNet weights for the backbone). Left out: regnet_y_128gf (644M parameters), vit_h_14
# (632M), vit_l_16, vit_l_32 (~305M), convnext_large (198M); the quantized and optical-flow
# models.
# Columns: builder name, kind, parameters.

TORCHVISION = [
    ("alexnet", "classification", 61100840),
    ("convnext_base", "classification", 88591464),
    ("convnext_small", "classification", 50223688),
    ("convnext_tiny", "classification", 28589128),
    ("densenet121", "classification", 7978856),
    ("densenet161", "classification", 28681000),
    ("densenet169", "classification", 14149480),
    ("densenet201", "classification", 20013928),
    ("efficientnet_b0", "classification", 5288548),
    ("efficientnet_b1", "classification", 7794184),
    ("efficientnet_b2", "classification", 9109994),
    ("efficientnet_b3", "classification", 12233232),
    ("efficientnet_b4", "classification", 19341616),
    ("efficientnet_b5", "classification", 30389784),
    ("efficientnet_b6", "classification", 43040704),
    ("efficientnet_b7", "classification", 66347960),
    ("efficientnet_v2_l", "classification", 118515272),
    ("efficientnet_v2_m", "classification", 54139356),
    ("efficientnet_v2_s", "classification", 21458488),
    ("googlenet", "classification", 13004888),
    ("inception_v3", "classification", 27161264),
    ("maxvit_t", "classification", 30919624),
    ("mnasnet0_5", "classification", 2218512),
    ("mnasnet0_75", "classification", 3170208),
    ("mnasnet1_0", "classification", 4383312),
    ("mnasnet1_3", "classification", 6282256),
    ("mobilenet_v2", "classification", 3504872),
    ("mobilenet_v3_large", "classification", 5483032),
    ("mobilenet_v3_small", "classification", 2542856),
    ("regnet_x_16gf", "classification", 54278536),
    ("regnet_x_1_6gf", "classification", 9190136),
    ("regnet_x_32gf", "classification", 107811560),
    ("regnet_x_3_2gf", "classification", 15296552),
    ("regnet_x_400mf", "classification", 5495976),
    ("regnet_x_800mf", "classification", 7259656),
    ("regnet_x_8gf", "classification", 39572648),
    ("regnet_y_16gf", "classification", 83590140),
    ("regnet_y_1_6gf", "classification", 11202430),
    ("regnet_y_32gf", "classification", 145046770),
    ("regnet_y_3_2gf", "classification", 19436338),
    ("regnet_y_400mf", "classification", 4344144),
    ("regnet_y_800mf", "classification", 6432512),
    ("regnet_y_8gf", "classification", 39381472),
    ("resnet101", "classification", 44549160),
    ("resnet152", "classification", 60192808),
    ("resnet18", "classification", 11689512),
    ("resnet34", "classification", 21797672),
    ("resnet50", "classification", 25557032),
    ("resnext101_32x8d", "classification", 88791336),
    ("resnext101_64x4d", "classification", 83455272),
    ("resnext50_32x4d", "classification", 25028904),
    ("shufflenet_v2_x0_5", "classification", 1366792),
    ("shufflenet_v2_x1_0", "classification", 2278604),
    ("shufflenet_v2_x1_5", "classification", 3503624),
    ("shufflenet_v2_x2_0", "classification", 7393996),
    ("squeezenet1_0", "classification", 1248424),
    ("squeezenet1_1", "classification", 1235496),
    ("swin_b", "classification", 87768224),
    ("swin_s", "classification", 49606258),
    ("swin_t", "classification", 28288354),
    ("swin_v2_b", "classification", 87930848),
    ("swin_v2_s", "classification", 49737442),
    ("swin_v2_t", "classification", 28351570),
    ("vgg11", "classification", 132863336),
    ("vgg11_bn", "classification", 132868840),
    ("vgg13", "classification", 133047848),
    ("vgg13_bn", "classification", 133053736),
    ("vgg16", "classification", 138357544),
    ("vgg16_bn", "classification", 138365992),
    ("vgg19", "classification", 143667240),
    ("vgg19_bn", "classification", 143678248),
    ("vit_b_16", "classification", 86567656),
    ("vit_b_32", "classification", 88224232),
    ("wide_resnet101_2", "classification", 126886696),
    ("wide_resnet50_2", "classification", 68883240),
    ("fasterrcnn_mobilenet_v3_large_320_fpn", "detection", 19410754),
    ("fasterrcnn_mobilenet_v3_large_fpn", "detection", 19410754),
    ("fasterrcnn_resnet50_fpn", "detection", 41808406),
    ("fasterrcnn_resnet50_fpn_v2", "detection", 43712278),
    ("fcos_resnet50_fpn", "detection", 32322720),
    ("keypointrcnn_resnet50_fpn", "detection", 59190378),
    ("maskrcnn_resnet50_fpn", "detection", 44454513),
    ("maskrcnn_resnet50_fpn_v2", "detection", 46359409),
    ("retinanet_resnet50_fpn", "detection", 34068119),
    ("retinanet_resnet50_fpn_v2", "detection", 38198935),
    ("ssd300_vgg16", "detection", 35641826),
    ("ssdlite320_mobilenet_v3_large", "detection", 3440060),
    ("deeplabv3_mobilenet_v3_large", "segmentation", 11025477),
    ("deeplabv3_resnet101", "segmentation", 58630997),
    ("deeplabv3_resnet50", "segmentation", 39638869),
    ("fcn_resnet101", "segmentation", 51949141),
    ("fcn_resnet50", "segmentation", 32957013),
    ("lraspp_mobilenet_v3_large", "segmentation", 3221538),
    ("mc3_18", "video", 11695440),
    ("r2plus1d_18", "video", 31505325),
    ("r3d_18", "video", 33371472),
    ("s3d", "video", 8320048),
]

TV_DOCS = {
    "classification": "https://pytorch.org/vision/stable/models/generated/"
                      "torchvision.models.{n}.html",
    "detection": "https://pytorch.org/vision/stable/models/generated/"
                 "torchvision.models.detection.{n}.html",
    "segmentation": "https://pytorch.org/vision/stable/models/generated/"
                    "torchvision.models.segmentation.{n}.html",
    "video": "https://pytorch.org/vision/stable/models/generated/"
             "torchvision.models.video.{n}.html",
}

#: detection models: the size each image is resized to inside the model (min_size)
TV_DET_SIZE = {
    "fasterrcnn_mobilenet_v3_large_320_fpn": "320 (shorter side), 640 at most",
    "ssd300_vgg16": "300x300",
    "ssdlite320_mobilenet_v3_large": "320x320",
}

#: video models: frames and the spatial size they were trained at
TV_VIDEO = {
    "r3d_18": (16, 112), "mc3_18": (16, 112), "r2plus1d_18": (16, 112), "s3d": (16, 224),
    "mvit_v1_b": (16, 224), "mvit_v2_s": (16, 224), "swin3d_t": (16, 224),
}


def tv_family(name: str) -> str:
    for prefix in ("fasterrcnn", "maskrcnn", "keypointrcnn", "retinanet", "fcos", "ssdlite",
                   "ssd", "deeplabv3", "fcn", "lraspp", "efficientnet_v2", "mobilenet_v2",
                   "mobilenet_v3", "regnet_x", "regnet_y", "shufflenet_v2", "wide_resnet",
                   "swin_v2", "swin3d", "mvit", "r3d", "mc3", "r2plus1d", "s3d"):
        if name.startswith(prefix):
            return prefix
    return re.match(r"[a-z]+", name).group(0)


def torchvision_scripts() -> Iterator[Script]:
    for name, kind, n in TORCHVISION:
        fam = tv_family(name)
        mod = {"classification": "torchvision.models", "detection":
               "torchvision.models.detection", "segmentation":
               "torchvision.models.segmentation", "video": "torchvision.models.video"}[kind]
        args = ["weights=None"]
        if kind in ("detection", "segmentation"):
            args.append("weights_backbone=None")
        doc = [f"`{mod}.{name}` from torchvision, random weights "
               f"({', '.join(args)}), {n:,} parameters."]
        after = ""
        inputs = image_input("input" if name.startswith("lraspp") else "x")
        params = IMAGE
        input_desc = f"`{next(iter(inputs))}` 1x3x224x224 float32"
        if name.startswith("vit_"):
            patch = int(name.split("_")[-1])
            args.append("image_size=height")
            after = (f"if height != width or height % {patch}:\n"
                     f"    raise ValueError(f\"{name} needs square images with a side divisible "
                     f"by {patch}, got \"\n                     f\"{{height}}x{{width}}\")")
            doc.append(f"The model is built for the input size (image_size=height): its "
                       f"position embeddings depend on the number of {patch}x{patch} patches, "
                       f"so it needs square images with a side divisible by {patch}.")
        elif name == "maxvit_t":
            args.append("input_size=(height, width)")
            doc.append("The model is built for the input size (input_size=(height, width)); "
                       "height and width must be multiples of 32 (its attention windows and "
                       "grids are 7x7 on the 1/32 feature map: 224 works, the default).")
        elif name == "inception_v3":
            args.append("init_weights=True")
            doc.append("Its native input size is 3x299x299 (pass --height 299 --width 299); "
                       "it needs at least 75x75. In eval mode the auxiliary classifier is "
                       "not run.")
        elif name == "googlenet":
            args.append("init_weights=True")
        if kind == "detection":
            inputs = image_input("images")
            input_desc = "`images` 1x3x224x224 float32"
            resize = TV_DET_SIZE.get(name, "800 (shorter side), 1333 at most")
            doc.append("A detection model takes a batch of images, a list of 3xHxW tensors or, "
                       "as here, one batched tensor (`images`, values in [0, 1]); it normalizes "
                       f"and resizes each image to {resize} itself, and in eval mode returns "
                       "one dict per image (boxes, labels, scores" +
                       (", masks" if "mask" in name else "") +
                       (", keypoints" if "keypoint" in name else "") + ").")
        elif kind == "segmentation":
            doc.append("Returns an OrderedDict with the per-pixel class scores (`out`, 21 "
                       "classes, the input's size); no auxiliary classifier.")
        elif kind == "video":
            frames, native = TV_VIDEO[name]
            inputs = {"x": "torch.rand(batch_size, num_channels, num_frames, height, width)"}
            after = (f"num_frames = {frames}  # clip length (not a standard parameter)")
            if native != 224:
                after += (f"\nheight, width = {native}, {native}  # the model's native frame "
                          "size: --height/--width are ignored")
            input_desc = f"`x` 1x3x{frames}x{native}x{native} float32"
            doc.append(f"A video model: the input is a clip of {frames} frames, shape (batch, "
                       f"channels, frames, height, width), frames of {native}x{native}" +
                       (" (fixed here, the size it is trained at; --height/--width are "
                        "ignored)." if native != 224 else " (--height/--width)."))
        title = f"torchvision {name}"
        yield Script(
            corpus="torchvision", name=name,
            labels={"author": "torchvision", "task": "computer_vision", "family": fam,
                    "kind": kind},
            doc="\n\n".join(doc), source=TV_DOCS[kind].format(n=name),
            imports=["torchvision"], params=params, after_parse=after,
            model=call(f"model = {mod}.{name}", args), inputs=inputs, title=title,
            n_params=n, input_desc=input_desc,
        )


# ------------------------------------------------------------------------------------------------
# transformers: architectures built from a config class in code (transformers.XxxConfig(...),
# then XxxModel(config)), random weights, nothing from the hub. Text models take int64
# input_ids (seeded random ids below the vocabulary size) and an all-ones attention_mask,
# encoder-decoders also decoder_input_ids, vision models pixel_values, audio models a raw
# waveform (input_values, max_audio_seq_length samples). Decoders are built with
# use_cache=False: one forward pass, no key/value cache in the output.
# Where the default config is bigger than ~150M parameters (LLaMA, Mistral, Qwen, Gemma, ...),
# a small config is used instead: hidden size 512, 4 layers, 8 heads (of 64), feed-forward
# 2048, vocabulary 32000, 4 experts for mixture-of-experts models (only the arguments the config
# class has); such scripts carry the label config::small.
# Columns: model_type, config class, model class, kind, parameters, parameters of the default
# config (0: the default config is used), the config arguments set to their SMALL value.

SMALL = {
    "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8, "head_dim": 64,
    "num_key_value_heads": 8, "intermediate_size": 2048, "vocab_size": 32000,
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 512, "d_model": 512, "encoder_layers": 4, "decoder_layers": 4,
    "encoder_attention_heads": 8, "decoder_attention_heads": 8, "encoder_ffn_dim": 2048,
    "decoder_ffn_dim": 2048, "num_layers": 4, "n_layer": 4, "n_head": 8, "n_embd": 512,
    "num_heads": 8, "d_ff": 2048, "ffn_dim": 2048, "n_positions": 1024,
}

HF = [
    ("bamba", "BambaConfig", "BambaModel", "decoder", 36_610_048, 9_468_477_440,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers num_key_value_heads "
     "vocab_size"),
    ("beit", "BeitConfig", "BeitModel", "vision", 85_656_576, 0, ""),
    ("big_bird", "BigBirdConfig", "BigBirdModel", "decoder", 127_468_800, 0, ""),
    ("bigbird_pegasus", "BigBirdPegasusConfig", "BigBirdPegasusModel",
     "encoder_decoder", 49_981_440, 576_891_904,
     "d_model decoder_attention_heads decoder_ffn_dim decoder_layers encoder_attention_heads "
     "encoder_ffn_dim encoder_layers vocab_size"),
    ("biogpt", "BioGptConfig", "BioGptModel", "decoder", 29_519_872, 346_763_264,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers vocab_size"),
    ("bit", "BitConfig", "BitModel", "vision", 23_500_352, 0, ""),
    ("blenderbot", "BlenderbotConfig", "BlenderbotModel",
     "encoder_decoder", 45_942_784, 2_696_268_800,
     "d_model decoder_attention_heads decoder_ffn_dim decoder_layers encoder_attention_heads "
     "encoder_ffn_dim encoder_layers vocab_size"),
    ("blenderbot-small", "BlenderbotSmallConfig", "BlenderbotSmallModel",
     "encoder_decoder", 85_113_344, 0, ""),
    ("bloom", "BloomConfig", "BloomModel", "decoder", 16_156_544, 0, ""),
    ("canine", "CanineConfig", "CanineModel", "encoder", 132_082_944, 0, ""),
    ("clip_text_model", "CLIPTextConfig", "CLIPTextModel", "encoder", 63_192_064, 0, ""),
    ("clip_vision_model", "CLIPVisionConfig", "CLIPVisionModel", "vision", 87_456_000, 0, ""),
    ("codegen", "CodeGenConfig", "CodeGenModel", "decoder", 28_982_272, 5_844_393_984,
     "n_embd n_head n_layer n_positions vocab_size"),
    ("cohere", "CohereConfig", "CohereModel", "decoder", 33_163_776, 34_980_831_232,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers num_key_value_heads "
     "vocab_size"),
    ("convbert", "ConvBertConfig", "ConvBertModel", "encoder", 105_680_520, 0, ""),
    ("convnext", "ConvNextConfig", "ConvNextModel", "vision", 27_820_128, 0, ""),
    ("convnextv2", "ConvNextV2Config", "ConvNextV2Model", "vision", 27_866_496, 0, ""),
    ("ctrl", "CTRLConfig", "CTRLModel", "decoder", 54_184_960, 1_637_718_016,
     "n_embd n_head n_layer n_positions vocab_size"),
    ("cvt", "CvtConfig", "CvtModel", "vision", 19_611_712, 0, ""),
    ("deberta", "DebertaConfig", "DebertaModel", "encoder", 124_043_520, 0, ""),
    ("deberta-v2", "DebertaV2Config", "DebertaV2Model", "encoder", 29_256_704, 877_507_584,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers vocab_size"),
    ("deformable_detr", "DeformableDetrConfig", "DeformableDetrModel", "vision", 39_913_666, 0, ""),
    ("deit", "DeiTConfig", "DeiTModel", "vision", 86_390_784, 0, ""),
    ("detr", "DetrConfig", "DetrModel", "vision", 41_368_512, 0, ""),
    ("diffllama", "DiffLlamaConfig", "DiffLlamaModel", "decoder", 33_166_848, 1_139_349_504,
     "head_dim hidden_size intermediate_size num_attention_heads num_hidden_layers "
     "num_key_value_heads vocab_size"),
    ("dinov2", "Dinov2Config", "Dinov2Model", "vision", 85_725_696, 0, ""),
    ("dinov3_vit", "DINOv3ViTConfig", "DINOv3ViTModel", "vision", 21_595_008, 0, ""),
    ("dpr", "DPRConfig", "DPRQuestionEncoder", "encoder", 108_891_648, 0, ""),
    ("dpt", "DPTConfig", "DPTModel", "vision", 86_389_248, 0, ""),
    ("efficientnet", "EfficientNetConfig", "EfficientNetModel", "vision", 63_786_960, 0, ""),
    ("ernie", "ErnieConfig", "ErnieModel", "decoder", 109_482_240, 0, ""),
    ("falcon", "FalconConfig", "FalconModel", "decoder", 27_137_024, 6_921_720_704,
     "hidden_size num_attention_heads num_hidden_layers vocab_size"),
    ("falcon_h1", "FalconH1Config", "FalconH1Model", "decoder", 40_800_256, 7_990_673_408,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers num_key_value_heads "
     "vocab_size"),
    ("falcon_mamba", "FalconMambaConfig", "FalconMambaModel", "decoder", 29_944_320, 159_308_544,
     "hidden_size intermediate_size num_hidden_layers vocab_size"),
    ("fnet", "FNetConfig", "FNetModel", "encoder", 82_861_056, 0, ""),
    ("focalnet", "FocalNetConfig", "FocalNetModel", "vision", 27_658_116, 0, ""),
    ("fsmt", "FSMTConfig", "FSMTModel", "encoder_decoder", 95_025_152, 483_913_728,
     "d_model decoder_attention_heads decoder_ffn_dim decoder_layers encoder_attention_heads "
     "encoder_ffn_dim encoder_layers"),
    ("funnel", "FunnelConfig", "FunnelModel", "encoder", 130_973_184, 0, ""),
    ("gemma", "GemmaConfig", "GemmaModel", "decoder", 33_165_824, 8_537_680_896,
     "head_dim hidden_size intermediate_size num_attention_heads num_hidden_layers "
     "num_key_value_heads vocab_size"),
    ("gemma2", "Gemma2Config", "Gemma2Model", "decoder", 33_169_920, 2_614_341_888,
     "head_dim hidden_size intermediate_size num_attention_heads num_hidden_layers "
     "num_key_value_heads vocab_size"),
    ("gemma3_text", "Gemma3TextConfig", "Gemma3TextModel", "decoder", 33_170_432, 2_628_658_432,
     "head_dim hidden_size intermediate_size num_attention_heads num_hidden_layers "
     "num_key_value_heads vocab_size"),
    ("glm4_moe", "Glm4MoeConfig", "Glm4MoeModel", "decoder", 35_531_264, 102_860_443_648,
     "hidden_size intermediate_size moe_intermediate_size n_routed_experts num_attention_heads "
     "num_experts_per_tok num_hidden_layers num_key_value_heads vocab_size"),
    ("glpn", "GLPNConfig", "GLPNModel", "vision", 3_319_392, 0, ""),
    ("gpt_bigcode", "GPTBigCodeConfig", "GPTBigCodeModel", "decoder", 111_446_784, 0, ""),
    ("gpt_neox", "GPTNeoXConfig", "GPTNeoXModel", "decoder", 28_994_560, 20_244_713_472,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers vocab_size"),
    ("gpt_oss", "GptOssConfig", "GptOssModel", "decoder", 71_004_720, 116_250_023_232,
     "head_dim hidden_size intermediate_size num_attention_heads num_experts_per_tok "
     "num_hidden_layers num_key_value_heads num_local_experts vocab_size"),
    ("gptj", "GPTJConfig", "GPTJModel", "decoder", 28_982_272, 5_844_393_984,
     "n_embd n_head n_layer n_positions vocab_size"),
    ("granitemoehybrid", "GraniteMoeHybridConfig", "GraniteMoeHybridModel",
     "decoder", 80_658_432, 38_469_992_448,
     "hidden_size intermediate_size num_attention_heads num_experts_per_tok num_hidden_layers "
     "num_key_value_heads num_local_experts vocab_size"),
    ("hiera", "HieraConfig", "HieraModel", "vision", 50_755_968, 0, ""),
    ("hubert", "HubertConfig", "HubertModel", "audio", 94_371_712, 0, ""),
    ("imagegpt", "ImageGPTConfig", "ImageGPTModel", "encoder", 76_420_096, 0, ""),
    ("jamba", "JambaConfig", "JambaModel", "decoder", 54_629_120, 51_301_887_872,
     "hidden_size intermediate_size num_attention_heads num_experts num_experts_per_tok "
     "num_hidden_layers num_key_value_heads vocab_size"),
    ("jetmoe", "JetMoeConfig", "JetMoeModel", "decoder", 87_712_256, 4_293_888_000,
     "hidden_size intermediate_size num_attention_heads num_experts_per_tok num_hidden_layers "
     "num_key_value_heads num_local_experts vocab_size"),
    ("layoutlm", "LayoutLMConfig", "LayoutLMModel", "encoder", 112_627_968, 0, ""),
    ("led", "LEDConfig", "LEDModel", "encoder_decoder", 57_876_480, 459_801_600,
     "d_model decoder_attention_heads decoder_ffn_dim decoder_layers encoder_attention_heads "
     "encoder_ffn_dim encoder_layers vocab_size"),
    ("levit", "LevitConfig", "LevitModel", "vision", 8_442_400, 0, ""),
    ("lfm2", "Lfm2Config", "Lfm2Model", "decoder", 30_020_608, 2_705_497_600,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers num_key_value_heads "
     "vocab_size"),
    ("llama", "LlamaConfig", "LlamaModel", "decoder", 33_165_824, 6_607_343_616,
     "head_dim hidden_size intermediate_size num_attention_heads num_hidden_layers "
     "num_key_value_heads vocab_size"),
    ("llama4_text", "Llama4TextConfig", "Llama4TextModel", "decoder", 83_505_664, 106_735_375_360,
     "head_dim hidden_size intermediate_size num_attention_heads num_experts_per_tok "
     "num_hidden_layers num_key_value_heads num_local_experts vocab_size"),
    ("longformer", "LongformerConfig", "LongformerModel", "encoder", 130_743_552, 0, ""),
    ("longt5", "LongT5Config", "LongT5Model", "encoder_decoder", 60_506_624, 0, ""),
    ("m2m_100", "M2M100Config", "M2M100Model", "encoder_decoder", 45_811_712, 483_905_536,
     "d_model decoder_attention_heads decoder_ffn_dim decoder_layers encoder_attention_heads "
     "encoder_ffn_dim encoder_layers vocab_size"),
    ("mamba", "MambaConfig", "MambaModel", "decoder", 29_944_320, 159_308_544,
     "hidden_size intermediate_size num_hidden_layers vocab_size"),
    ("mask2former", "Mask2FormerConfig", "Mask2FormerModel", "vision", 68_720_266, 0, ""),
    ("maskformer", "MaskFormerConfig", "MaskFormerModel", "vision", 101_595_256, 0, ""),
    ("mbart", "MBartConfig", "MBartModel", "encoder_decoder", 46_864_384, 406_295_552,
     "d_model decoder_attention_heads decoder_ffn_dim decoder_layers encoder_attention_heads "
     "encoder_ffn_dim encoder_layers vocab_size"),
    ("minicpm3", "MiniCPM3Config", "MiniCPM3Model", "decoder", 35_594_752, 4_073_875_968,
     "head_dim hidden_size intermediate_size num_attention_heads num_hidden_layers "
     "num_key_value_heads vocab_size"),
    ("minimax", "MiniMaxConfig", "MiniMaxModel", "decoder", 71_448_064, 47_242_874_880,
     "hidden_size intermediate_size num_attention_heads num_experts_per_tok num_hidden_layers "
     "num_key_value_heads num_local_experts vocab_size"),
    ("mistral", "MistralConfig", "MistralModel", "decoder", 33_165_824, 7_110_660_096,
     "head_dim hidden_size intermediate_size num_attention_heads num_hidden_layers "
     "num_key_value_heads vocab_size"),
    ("mixtral", "MixtralConfig", "MixtralModel", "decoder", 70_922_752, 46_571_720_704,
     "hidden_size intermediate_size num_attention_heads num_experts_per_tok num_hidden_layers "
     "num_key_value_heads num_local_experts vocab_size"),
    ("mobilenet_v1", "MobileNetV1Config", "MobileNetV1Model", "vision", 3_206_976, 0, ""),
    ("mobilenet_v2", "MobileNetV2Config", "MobileNetV2Model", "vision", 2_223_872, 0, ""),
    ("mobilevit", "MobileViTConfig", "MobileViTModel", "vision", 4_937_632, 0, ""),
    ("mobilevitv2", "MobileViTV2Config", "MobileViTV2Model", "vision", 4_388_841, 0, ""),
    ("modernbert", "ModernBertConfig", "ModernBertModel", "encoder", 149_014_272, 0, ""),
    ("modernbert-decoder", "ModernBertDecoderConfig", "ModernBertDecoderModel",
     "decoder", 149_014_272, 0, ""),
    ("moshi", "MoshiConfig", "MoshiModel", "decoder", 26_874_880, 6_708_011_008,
     "ffn_dim head_dim hidden_size num_attention_heads num_hidden_layers num_key_value_heads "
     "vocab_size"),
    ("mpnet", "MPNetConfig", "MPNetModel", "encoder", 109_484_928, 0, ""),
    ("mpt", "MptConfig", "MptModel", "decoder", 91_906_560, 1_311_213_568,
     "d_model vocab_size"),
    ("mt5", "MT5Config", "MT5Model", "encoder_decoder", 54_144_512, 172_119_424,
     "d_ff d_model num_heads num_layers vocab_size"),
    ("mvp", "MvpConfig", "MvpModel", "encoder_decoder", 46_862_336, 406_293_504,
     "d_model decoder_attention_heads decoder_ffn_dim decoder_layers encoder_attention_heads "
     "encoder_ffn_dim encoder_layers vocab_size"),
    ("nemotron_h", "NemotronHConfig", "NemotronHModel", "decoder", 43_260_800, 1_431_484_800,
     "head_dim hidden_size intermediate_size moe_intermediate_size n_routed_experts "
     "num_attention_heads num_experts_per_tok num_key_value_heads vocab_size"),
    ("nllb-moe", "NllbMoeConfig", "NllbMoeModel", "encoder_decoder", 58_414_080, 6_880_712_704,
     "d_model decoder_attention_heads decoder_ffn_dim decoder_layers encoder_attention_heads "
     "encoder_ffn_dim encoder_layers num_experts vocab_size"),
    ("nystromformer", "NystromformerConfig", "NystromformerModel", "encoder", 108_500_112, 0, ""),
    ("olmo", "OlmoConfig", "OlmoModel", "decoder", 33_161_216, 6_682_050_560,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers num_key_value_heads "
     "vocab_size"),
    ("olmoe", "OlmoeConfig", "OlmoeModel", "decoder", 70_926_848, 13_258_590_208,
     "hidden_size intermediate_size num_attention_heads num_experts num_experts_per_tok "
     "num_hidden_layers num_key_value_heads vocab_size"),
    ("openai-gpt", "OpenAIGPTConfig", "OpenAIGPTModel", "decoder", 116_534_784, 0, ""),
    ("opt", "OPTConfig", "OPTModel", "decoder", 125_239_296, 0, ""),
    ("pegasus", "PegasusConfig", "PegasusModel", "encoder_decoder", 46_860_288, 406_287_360,
     "d_model decoder_attention_heads decoder_ffn_dim decoder_layers encoder_attention_heads "
     "encoder_ffn_dim encoder_layers vocab_size"),
    ("pegasus_x", "PegasusXConfig", "PegasusXModel", "encoder_decoder", 45_807_616, 568_568_832,
     "d_model decoder_attention_heads decoder_ffn_dim decoder_layers encoder_attention_heads "
     "encoder_ffn_dim encoder_layers vocab_size"),
    ("phi", "PhiConfig", "PhiModel", "decoder", 28_990_464, 1_313_361_920,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers num_key_value_heads "
     "vocab_size"),
    ("phimoe", "PhimoeConfig", "PhimoeModel", "decoder", 70_927_360, 41_741_459_456,
     "hidden_size intermediate_size num_attention_heads num_experts_per_tok num_hidden_layers "
     "num_key_value_heads num_local_experts vocab_size"),
    ("plbart", "PLBartConfig", "PLBartModel", "encoder_decoder", 139_220_736, 0, ""),
    ("poolformer", "PoolFormerConfig", "PoolFormerModel", "vision", 11_401_152, 0, ""),
    ("prophetnet", "ProphetNetConfig", "ProphetNetModel",
     "encoder_decoder", 108_340_224, 391_321_600,
     "decoder_ffn_dim encoder_ffn_dim hidden_size vocab_size"),
    ("pvt", "PvtConfig", "PvtModel", "vision", 12_716_288, 0, ""),
    ("pvt_v2", "PvtV2Config", "PvtV2Model", "vision", 3_409_760, 0, ""),
    ("qwen2", "Qwen2Config", "Qwen2Model", "decoder", 33_171_968, 11_427_516_416,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers num_key_value_heads "
     "vocab_size"),
    ("qwen2_moe", "Qwen2MoeConfig", "Qwen2MoeModel", "decoder", 67_785_216, 14_004_619_264,
     "hidden_size intermediate_size moe_intermediate_size num_attention_heads num_experts "
     "num_experts_per_tok num_hidden_layers num_key_value_heads vocab_size"),
    ("qwen3", "Qwen3Config", "Qwen3Model", "decoder", 33_166_336, 11_427_131_392,
     "head_dim hidden_size intermediate_size num_attention_heads num_hidden_layers "
     "num_key_value_heads vocab_size"),
    ("qwen3_next", "Qwen3NextConfig", "Qwen3NextModel", "decoder", 58_801_344, 79_363_226_368,
     "head_dim hidden_size intermediate_size moe_intermediate_size num_attention_heads "
     "num_experts num_experts_per_tok num_hidden_layers num_key_value_heads vocab_size"),
    ("recurrent_gemma", "RecurrentGemmaConfig", "RecurrentGemmaModel",
     "decoder", 26_312_192, 2_010_263_040,
     "head_dim hidden_size intermediate_size num_attention_heads num_hidden_layers "
     "num_key_value_heads vocab_size"),
    ("reformer", "ReformerConfig", "ReformerModel", "encoder", 5_811_712, 0, ""),
    ("regnet", "RegNetConfig", "RegNetModel", "vision", 19_557_656, 0, ""),
    ("rembert", "RemBertConfig", "RemBertModel", "decoder", 21_327_872, 575_920_384,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers vocab_size"),
    ("resnet", "ResNetConfig", "ResNetModel", "vision", 23_508_032, 0, ""),
    ("roformer", "RoFormerConfig", "RoFormerModel", "decoder", 123_555_840, 0, ""),
    ("rt_detr", "RTDetrConfig", "RTDetrModel", "vision", 41_932_326, 0, ""),
    ("rwkv", "RwkvConfig", "RwkvModel", "decoder", 30_040_064, 7_186_714_624,
     "hidden_size intermediate_size num_hidden_layers vocab_size"),
    ("segformer", "SegformerConfig", "SegformerModel", "vision", 3_319_392, 0, ""),
    ("sew", "SEWConfig", "SEWModel", "audio", 93_196_416, 0, ""),
    ("siglip_vision_model", "SiglipVisionConfig", "SiglipVisionModel", "vision", 92_884_224, 0, ""),
    ("squeezebert", "SqueezeBertConfig", "SqueezeBertModel", "encoder", 51_089_664, 0, ""),
    ("starcoder2", "Starcoder2Config", "Starcoder2Model", "decoder", 28_994_560, 3_030_371_328,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers num_key_value_heads "
     "vocab_size"),
    ("swiftformer", "SwiftFormerConfig", "SwiftFormerModel", "vision", 3_032_920, 0, ""),
    ("swin", "SwinConfig", "SwinModel", "vision", 27_519_354, 0, ""),
    ("swinv2", "Swinv2Config", "Swinv2Model", "vision", 27_578_154, 0, ""),
    ("switch_transformers", "SwitchTransformersConfig", "SwitchTransformersModel",
     "encoder_decoder", 123_377_152, 317_312_256,
     "d_ff d_model num_experts num_heads num_layers vocab_size"),
    ("t5", "T5Config", "T5Model", "encoder_decoder", 60_506_624, 0, ""),
    ("tapas", "TapasConfig", "TapasModel", "encoder", 110_671_872, 0, ""),
    ("umt5", "UMT5Config", "UMT5Model", "encoder_decoder", 54_146_048, 172_122_112,
     "d_ff d_model num_heads num_layers vocab_size"),
    ("unispeech", "UniSpeechConfig", "UniSpeechModel", "audio", 94_371_712, 0, ""),
    ("vitdet", "VitDetConfig", "VitDetModel", "vision", 85_796_352, 0, ""),
    ("wav2vec2", "Wav2Vec2Config", "Wav2Vec2Model", "audio", 94_371_712, 0, ""),
    ("wav2vec2-conformer", "Wav2Vec2ConformerConfig", "Wav2Vec2ConformerModel",
     "audio", 31_850_112, 179_730_304,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers"),
    ("wavlm", "WavLMConfig", "WavLMModel", "audio", 94_381_936, 0, ""),
    ("xglm", "XGLMConfig", "XGLMModel", "decoder", 28_994_560, 564_463_616,
     "d_model ffn_dim num_layers vocab_size"),
    ("xlm-roberta", "XLMRobertaConfig", "XLMRobertaModel", "decoder", 109_482_240, 0, ""),
    ("xlm-roberta-xl", "XLMRobertaXLConfig", "XLMRobertaXLModel",
     "decoder", 29_520_896, 3_482_485_760,
     "hidden_size intermediate_size num_attention_heads num_hidden_layers vocab_size"),
    ("xlnet", "XLNetConfig", "XLNetModel", "encoder", 38_441_472, 360_268_800,
     "d_model n_head n_layer vocab_size"),
    ("xlstm", "xLSTMConfig", "xLSTMModel", "decoder", 29_268_544, 6_659_379_712,
     "hidden_size num_heads num_hidden_layers vocab_size"),
]

HF_EXTRA = {'IMAGE_SIZE': {'beit': 224,
                'clip_vision_model': 224,
                'convnext': 224,
                'convnextv2': 224,
                'deit': 224,
                'dinov2': 224,
                'dinov3_vit': 224,
                'dpt': 384,
                'efficientnet': 600,
                'focalnet': 224,
                'hiera': [224, 224],
                'levit': 224,
                'mobilenet_v1': 224,
                'mobilenet_v2': 224,
                'mobilevit': 256,
                'mobilevitv2': 256,
                'pvt': 224,
                'pvt_v2': [224, 224],
                'siglip_vision_model': 224,
                'swiftformer': 224,
                'swin': 224,
                'swinv2': 224,
                'vitdet': 224},
 'MAX_POS': {'bamba': 262144,
             'big_bird': 4096,
             'bigbird_pegasus': 4096,
             'biogpt': 1024,
             'blenderbot': 128,
             'blenderbot-small': 512,
             'canine': 16384,
             'clip_text_model': 77,
             'codegen': 1024,
             'cohere': 8192,
             'convbert': 512,
             'ctrl': 1024,
             'deberta': 512,
             'deberta-v2': 512,
             'diffllama': 2048,
             'dpr': 512,
             'ernie': 512,
             'falcon': 2048,
             'falcon_h1': 8192,
             'fnet': 512,
             'fsmt': 1024,
             'gemma': 8192,
             'gemma2': 8192,
             'gemma3_text': 131072,
             'glm4_moe': 131072,
             'gpt_bigcode': 1024,
             'gpt_neox': 2048,
             'gpt_oss': 131072,
             'gptj': 1024,
             'granitemoehybrid': 2048,
             'imagegpt': 1024,
             'jamba': 262144,
             'jetmoe': 4096,
             'layoutlm': 512,
             'lfm2': 128000,
             'llama': 2048,
             'llama4_text': 131072,
             'longformer': 512,
             'm2m_100': 1024,
             'mbart': 1024,
             'minicpm3': 32768,
             'minimax': 131072,
             'mistral': 131072,
             'mixtral': 131072,
             'modernbert': 8192,
             'modernbert-decoder': 8192,
             'moshi': 3000,
             'mpnet': 512,
             'mvp': 1024,
             'nemotron_h': 4096,
             'nllb-moe': 1024,
             'nystromformer': 510,
             'olmo': 2048,
             'olmoe': 4096,
             'openai-gpt': 512,
             'opt': 2048,
             'pegasus': 1024,
             'pegasus_x': 16384,
             'phi': 2048,
             'phimoe': 131072,
             'plbart': 1024,
             'prophetnet': 512,
             'qwen2': 32768,
             'qwen2_moe': 32768,
             'qwen3': 32768,
             'qwen3_next': 32768,
             'reformer': 4096,
             'rembert': 512,
             'roformer': 1536,
             'rwkv': 1024,
             'squeezebert': 512,
             'starcoder2': 4096,
             'tapas': 1024,
             'xglm': 2048,
             'xlm-roberta': 512,
             'xlm-roberta-xl': 514},
 'NO_CACHE': ['beit', 'bit', 'canine', 'clip_text_model', 'clip_vision_model', 'convbert',
              'convnext', 'convnextv2', 'cvt', 'deberta', 'deberta-v2', 'deformable_detr',
              'deit', 'detr', 'dinov2', 'dinov3_vit', 'dpr', 'dpt', 'efficientnet', 'fnet',
              'focalnet', 'funnel', 'glpn', 'hiera', 'hubert', 'levit', 'longformer',
              'mask2former', 'maskformer', 'mobilenet_v1', 'mobilenet_v2', 'mobilevit',
              'mobilevitv2', 'modernbert', 'mpnet', 'nystromformer', 'openai-gpt', 'poolformer',
              'pvt', 'pvt_v2', 'regnet', 'resnet', 'rt_detr', 'segformer', 'sew',
              'siglip_vision_model', 'squeezebert', 'swiftformer', 'swin', 'swinv2', 'tapas',
              'unispeech', 'vitdet', 'wav2vec2', 'wav2vec2-conformer', 'wavlm', 'xlnet'],
 'NO_MASK': ['fnet', 'xlstm'],
 'NO_VOCAB': ['canine'],
 'NUM_CHANNELS': ['beit', 'bit', 'clip_vision_model', 'convnext', 'convnextv2', 'cvt',
                  'deformable_detr', 'deit', 'detr', 'dinov2', 'dinov3_vit', 'dpt',
                  'efficientnet', 'focalnet', 'glpn', 'hiera', 'levit', 'mobilenet_v1',
                  'mobilenet_v2', 'mobilevit', 'mobilevitv2', 'poolformer', 'pvt', 'pvt_v2',
                  'regnet', 'resnet', 'segformer', 'siglip_vision_model', 'swiftformer', 'swin',
                  'swinv2', 'vitdet']}

HF_TITLES = {"encoder": "text encoder", "decoder": "text decoder",
             "encoder_decoder": "encoder-decoder", "vision": "vision model",
             "audio": "speech/audio encoder"}


def hf_doc_page(model_type: str) -> str:
    base = re.sub(r"(_text_model|_vision_model|_text)$", "", model_type)
    return f"https://huggingface.co/docs/transformers/model_doc/{base}"


#: mixture-of-experts models built with experts_implementation="eager" (see the docstring line)
EAGER_EXPERTS = {"glm4_moe", "gpt_oss", "granitemoehybrid", "jamba", "minimax", "mixtral",
                 "nemotron_h", "olmoe", "phimoe", "qwen2_moe"}

#: scripts renamed because their natural name is a package the model's library imports
SHADOWING = {"xlstm": "xlstm_model"}


def transformers_scripts() -> Iterator[Script]:
    ex = HF_EXTRA
    for mt, config_cls, model_cls, kind, n, n_default, small in HF:
        over = {k: SMALL[k] for k in small.split()}
        # a script named like a package the library imports shadows it (python puts the
        # script's directory first on sys.path): transformers' xLSTM config imports `xlstm`
        name = SHADOWING.get(mt, mt.replace("-", "_"))
        args = [f"{k}={v!r}" for k, v in over.items()]
        after = ""
        labels = {"author": "huggingface",
                  "task": {"vision": "computer_vision", "audio": "audio"}.get(
                      kind, "natural_language_processing"),
                  "family": mt.replace("-", "_"), "kind": kind}
        if over:
            labels["config"] = "small"
        doc = [f"transformers.{model_cls} ({HF_TITLES[kind]}) built from "
               f"transformers.{config_cls}" +
               (" with its default configuration" if not over else " with a small "
                "configuration") + f", random weights, {n:,} parameters."]
        if over:
            doc.append(f"The default {config_cls} makes a model of {n_default / 1e6:,.0f}M "
                       f"parameters, too big for this corpus (<= ~150M parameters, seconds "
                       f"on 2 CPU cores): the script sets "
                       f"{', '.join(f'{k}={v}' for k, v in over.items())}.")
        if kind in ("encoder", "decoder", "encoder_decoder"):
            params = TEXT
            if mt == "clip_text_model":
                args.append("max_position_embeddings=max_seq_length")
                doc.append("CLIP's text model has 77 positions; the config is built with "
                           "max_position_embeddings=max_seq_length so that any sequence length "
                           "works.")
            elif ex["MAX_POS"].get(mt, 10**9) <= 4096:
                doc.append(f"max_seq_length should stay within the config's "
                           f"max_position_embeddings ({ex['MAX_POS'][mt]}).")
            ones = "torch.ones(batch_size, max_seq_length, dtype=torch.long)"
            if mt in ex["NO_VOCAB"]:
                ids = ones
            else:
                ids = "torch.randint(0, config.vocab_size, (batch_size, max_seq_length))"
            inputs = {"input_ids": ids}
            if mt not in ex["NO_MASK"]:
                inputs["attention_mask"] = ones
            if kind == "encoder_decoder":
                inputs["decoder_input_ids"] = ids
                doc.append("Called with input_ids (the encoder's) and decoder_input_ids (the "
                           "decoder's), both max_seq_length tokens.")
            input_desc = ", ".join(f"`{k}` 1x128 int64" for k in inputs)
        elif kind == "vision":
            params = IMAGE
            size = ex["IMAGE_SIZE"].get(mt)
            if isinstance(size, int):
                args.append("image_size=height")
                after = (f'if height != width:\n    raise ValueError(f"{name} is built for square '
                         f'images (image_size=height), got "\n'
                         f'                     f"{{height}}x{{width}}")')
                doc.append("The model is built for the input size (image_size=height): square "
                           "images" + (f"; the config's default image size is {size}x{size}."
                                       if size != 224 else "."))
            elif isinstance(size, list):
                args.append("image_size=[height, width]")
                doc.append("The model is built for the input size (image_size=[height, width]).")
            if mt in ex["NUM_CHANNELS"]:
                args.append("num_channels=num_channels")
            else:
                doc.append("The model has a fixed 3-channel input.")
            inputs = {"pixel_values": "torch.rand(batch_size, num_channels, height, width)"}
            input_desc = "`pixel_values` 1x3x224x224 float32"
        else:  # audio
            params = ["batch_size", "max_audio_seq_length"]
            inputs = {"input_values": "torch.randn(batch_size, max_audio_seq_length)"}
            doc.append("The input is a raw waveform, input_values (batch, max_audio_seq_length "
                       "samples; default 25600, 1.6 s at 16 kHz).")
            input_desc = "`input_values` 1x25600 float32"
        if mt not in ex["NO_CACHE"]:
            args.append("use_cache=False")
        moe = []
        if mt in EAGER_EXPERTS:
            args.append("experts_implementation=SPARSE_LOOP")
            moe = ["from mlprof.model.moe import SPARSE_LOOP  # registers it with transformers"]
            doc.append("The experts run in mlprof's sparse_loop implementation "
                       "(mlprof/model/moe.py): transformers' eager loop over the experts, but "
                       "over all of them rather than those the traced inputs hit, so the "
                       "exported graph routes any input (eager's graph holds the experts of the "
                       "tracing inputs only). The default grouped_mm one counts the tokens per "
                       "expert with torch.histc and calls a custom operator, neither of which "
                       "has an ONNX export. All three compute the same.")
        config = call(f"config = transformers.{config_cls}", args)
        yield Script(
            corpus="transformers", name=name, labels=labels, doc="\n\n".join(doc),
            source=hf_doc_page(mt), imports=["transformers"], params=params,
            after_parse=after,
            model=f"{config}\nmodel = transformers.{model_cls}(config)", inputs=inputs,
            mlprof_imports=moe,
            title=f"{model_cls}" + (" (small config)" if over else ""), n_params=n,
            input_desc=input_desc,
        )


# ------------------------------------------------------------------------------------------------
# graph and recurrent models, written in plain torch for this corpus (author mlprof). The graph
# networks work on a dense adjacency matrix (no torch_geometric): a batch of random graphs with
# Cora's sizes (2708 nodes, 1433 node features, 7 classes) by default, from TurnkeyML's graph
# parameters (in_channels, out_channels, k, num_layers).

GRAPH_INPUTS = '''
num_nodes, num_classes = 2708, 7  # Cora's size
'''

GRAPH_ADJ = ("(torch.rand(batch_size, num_nodes, num_nodes) < 0.002).float()  # ~5 neighbours\n"
             "adjacency = ((adjacency + adjacency.transpose(1, 2)) > 0).float()  # undirected")

GRAPH_NORM = '''
def normalize(adjacency):
    """D^-1/2 (A + I) D^-1/2 of a batch of dense adjacency matrices (Kipf and Welling)."""
    a = adjacency + torch.eye(adjacency.shape[-1], dtype=adjacency.dtype)
    d = a.sum(-1).rsqrt()
    return d.unsqueeze(-1) * a * d.unsqueeze(-2)
'''

GRAPH = {
    "gcn": dict(
        title="GCN, 2 layers (Kipf and Welling)",
        doc="A graph convolutional network (Kipf and Welling, 2017): two GCN layers "
            "(in_channels -> out_channels -> 7 classes, ReLU) on dense, symmetrically "
            "normalized adjacency matrices; node classification.",
        source="https://arxiv.org/abs/1609.02907",
        params=["batch_size", "in_channels", "out_channels"],
        classes=GRAPH_NORM + '''

class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, num_classes):
        super().__init__()
        self.conv1 = torch.nn.Linear(in_channels, hidden_channels)
        self.conv2 = torch.nn.Linear(hidden_channels, num_classes)

    def forward(self, x, adjacency):
        a = normalize(adjacency)
        h = torch.relu(a @ self.conv1(x))
        return a @ self.conv2(h)
''',
        model="model = GCN(in_channels, out_channels, num_classes)",
        family="gcn"),
    "gcn_deep": dict(
        title="deep GCN with residual connections",
        doc="A deep graph convolutional network: an input projection, num_layers GCN layers "
            "(hidden size out_channels, residual connections, ReLU) and a linear classifier "
            "(7 classes) on dense, symmetrically normalized adjacency matrices.",
        source="https://arxiv.org/abs/1609.02907",
        params=["batch_size", "in_channels", "out_channels", "num_layers"],
        classes=GRAPH_NORM + '''

class DeepGCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, num_classes, num_layers):
        super().__init__()
        self.input = torch.nn.Linear(in_channels, hidden_channels)
        self.convs = torch.nn.ModuleList(
            torch.nn.Linear(hidden_channels, hidden_channels) for _ in range(num_layers)
        )
        self.output = torch.nn.Linear(hidden_channels, num_classes)

    def forward(self, x, adjacency):
        a = normalize(adjacency)
        h = torch.relu(self.input(x))
        for conv in self.convs:
            h = h + torch.relu(a @ conv(h))
        return self.output(h)
''',
        model="model = DeepGCN(in_channels, out_channels, num_classes, num_layers)",
        family="gcn"),
    "gat": dict(
        title="GAT, 2 layers, 8 heads (Velickovic et al.)",
        doc="A graph attention network (Velickovic et al., 2018): a GAT layer with 8 heads of "
            "8 features (ELU, heads concatenated), then a 1-head GAT layer to 7 classes; "
            "attention is masked by the dense adjacency matrix (with self loops).",
        source="https://arxiv.org/abs/1710.10903",
        params=["batch_size", "in_channels"],
        classes='''
class GATLayer(torch.nn.Module):
    def __init__(self, in_features, out_features, heads):
        super().__init__()
        self.heads, self.out_features = heads, out_features
        self.linear = torch.nn.Linear(in_features, heads * out_features, bias=False)
        self.att_src = torch.nn.Parameter(torch.randn(heads, out_features) * 0.1)
        self.att_dst = torch.nn.Parameter(torch.randn(heads, out_features) * 0.1)

    def forward(self, x, adjacency):
        b, n, _ = x.shape
        h = self.linear(x).view(b, n, self.heads, self.out_features)  # b n h f
        src = (h * self.att_src).sum(-1).transpose(1, 2)  # b h n
        dst = (h * self.att_dst).sum(-1).transpose(1, 2)
        scores = torch.nn.functional.leaky_relu(dst.unsqueeze(-1) + src.unsqueeze(-2), 0.2)
        mask = adjacency + torch.eye(n, dtype=adjacency.dtype)
        scores = scores.masked_fill(mask.unsqueeze(1) == 0, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ h.transpose(1, 2)  # b h n f
        return out.transpose(1, 2)  # b n h f


class GAT(torch.nn.Module):
    def __init__(self, in_channels, num_classes, hidden=8, heads=8):
        super().__init__()
        self.layer1 = GATLayer(in_channels, hidden, heads)
        self.layer2 = GATLayer(hidden * heads, num_classes, 1)

    def forward(self, x, adjacency):
        h = torch.nn.functional.elu(self.layer1(x, adjacency).flatten(2))
        return self.layer2(h, adjacency).mean(2)
''',
        model="model = GAT(in_channels, num_classes)",
        family="gat"),
    "graphsage": dict(
        title="GraphSAGE, 2 layers, mean aggregator",
        doc="GraphSAGE (Hamilton et al., 2017) with the mean aggregator: each of two layers "
            "combines a node's features with the mean of its neighbours' (separate weights, "
            "ReLU, L2 normalization), hidden size out_channels, 7 classes; dense adjacency.",
        source="https://arxiv.org/abs/1706.02216",
        params=["batch_size", "in_channels", "out_channels"],
        classes='''
class SAGELayer(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.self_linear = torch.nn.Linear(in_features, out_features)
        self.neighbour_linear = torch.nn.Linear(in_features, out_features, bias=False)

    def forward(self, x, adjacency):
        degree = adjacency.sum(-1, keepdim=True).clamp(min=1)
        return self.self_linear(x) + self.neighbour_linear(adjacency @ x / degree)


class GraphSAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, num_classes):
        super().__init__()
        self.layer1 = SAGELayer(in_channels, hidden_channels)
        self.layer2 = SAGELayer(hidden_channels, num_classes)

    def forward(self, x, adjacency):
        h = torch.nn.functional.normalize(torch.relu(self.layer1(x, adjacency)), dim=-1)
        return self.layer2(h, adjacency)
''',
        model="model = GraphSAGE(in_channels, out_channels, num_classes)",
        family="graphsage"),
    "gin": dict(
        title="GIN, graph classification with sum readout",
        doc="A graph isomorphism network (Xu et al., 2019): num_layers GIN layers (sum "
            "aggregation, (1 + eps) self weight, 2-layer MLP with ReLU, hidden size 64), sum "
            "readout of every layer and a linear classifier: graph classification, one "
            "prediction per graph (7 classes); dense adjacency.",
        source="https://arxiv.org/abs/1810.00826",
        params=["batch_size", "in_channels", "num_layers"],
        classes='''
class GINLayer(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.eps = torch.nn.Parameter(torch.zeros(1))
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(in_features, out_features),
            torch.nn.ReLU(),
            torch.nn.Linear(out_features, out_features),
            torch.nn.ReLU(),
        )

    def forward(self, x, adjacency):
        return self.mlp((1 + self.eps) * x + adjacency @ x)


class GIN(torch.nn.Module):
    def __init__(self, in_channels, num_classes, num_layers, hidden=64):
        super().__init__()
        sizes = [in_channels] + [hidden] * num_layers
        self.layers = torch.nn.ModuleList(
            GINLayer(a, b) for a, b in zip(sizes[:-1], sizes[1:], strict=True)
        )
        self.classifier = torch.nn.Linear(hidden * num_layers, num_classes)

    def forward(self, x, adjacency):
        readouts = []
        for layer in self.layers:
            x = layer(x, adjacency)
            readouts.append(x.sum(1))
        return self.classifier(torch.cat(readouts, dim=-1))
''',
        model="model = GIN(in_channels, num_classes, num_layers)",
        family="gin"),
    "appnp": dict(
        title="APPNP, k propagation steps",
        doc="APPNP (Klicpera et al., 2019): a 2-layer MLP (hidden size 64) predicts per node, "
            "then k steps of personalized-PageRank propagation (teleport probability 0.1) over "
            "the dense, normalized adjacency matrix; k is TurnkeyML's parameter (default 8).",
        source="https://arxiv.org/abs/1810.05997",
        params=["batch_size", "in_channels", "k"],
        classes=GRAPH_NORM + '''

class APPNP(torch.nn.Module):
    def __init__(self, in_channels, num_classes, k, teleport=0.1, hidden=64):
        super().__init__()
        self.k, self.teleport = k, teleport
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(in_channels, hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, num_classes),
        )

    def forward(self, x, adjacency):
        a = normalize(adjacency)
        h0 = self.mlp(x)
        h = h0
        for _ in range(self.k):
            h = (1 - self.teleport) * (a @ h) + self.teleport * h0
        return h
''',
        model="model = APPNP(in_channels, num_classes, k)",
        family="appnp"),
    "sgc": dict(
        title="SGC, k-hop simplified graph convolution",
        doc="Simplified graph convolution (Wu et al., 2019): the features are propagated k "
            "times over the dense, normalized adjacency matrix (no nonlinearity), then one "
            "linear classifier (7 classes); k is TurnkeyML's parameter (default 8).",
        source="https://arxiv.org/abs/1902.07153",
        params=["batch_size", "in_channels", "k"],
        classes=GRAPH_NORM + '''

class SGC(torch.nn.Module):
    def __init__(self, in_channels, num_classes, k):
        super().__init__()
        self.k = k
        self.linear = torch.nn.Linear(in_channels, num_classes)

    def forward(self, x, adjacency):
        a = normalize(adjacency)
        h = x @ self.linear.weight.t()  # A^k X W == A^k (X W): project first, far cheaper
        for _ in range(self.k):
            h = a @ h
        return h + self.linear.bias
''',
        model="model = SGC(in_channels, num_classes, k)",
        family="sgc"),
}

RECURRENT = {
    "lstm_text_classifier": dict(
        title="embedding + 1-layer LSTM text classifier",
        task="natural_language_processing", family="lstm",
        doc="A text classifier: token ids into an embedding (vocabulary 20000, 128 features), "
            "a 1-layer torch.nn.LSTM (256 hidden units, batch_first), a linear layer with 2 "
            "classes on the last hidden state.",
        classes='''
class LSTMClassifier(torch.nn.Module):
    def __init__(self, vocab_size, embedding_dim=128, hidden_size=256, num_classes=2):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.lstm = torch.nn.LSTM(embedding_dim, hidden_size, batch_first=True)
        self.classifier = torch.nn.Linear(hidden_size, num_classes)

    def forward(self, input_ids):
        _, (h, _) = self.lstm(self.embedding(input_ids))
        return self.classifier(h[-1])
''',
        model="vocab_size = 20000\nmodel = LSTMClassifier(vocab_size)",
        inputs={"input_ids": "torch.randint(0, vocab_size, (batch_size, max_seq_length))"},
        desc="`input_ids` 1x128 int64"),
    "bilstm_tagger": dict(
        title="embedding + 2-layer bidirectional LSTM sequence tagger",
        task="natural_language_processing", family="lstm",
        doc="A sequence tagger (named-entity recognition style): token ids into an embedding "
            "(vocabulary 20000, 100 features), a 2-layer bidirectional torch.nn.LSTM (2 x 200 "
            "hidden units), a linear layer with 9 tags for every token.",
        classes='''
class BiLSTMTagger(torch.nn.Module):
    def __init__(self, vocab_size, embedding_dim=100, hidden_size=200, num_tags=9):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.lstm = torch.nn.LSTM(
            embedding_dim, hidden_size, num_layers=2, bidirectional=True, batch_first=True
        )
        self.tagger = torch.nn.Linear(2 * hidden_size, num_tags)

    def forward(self, input_ids):
        output, _ = self.lstm(self.embedding(input_ids))
        return self.tagger(output)
''',
        model="vocab_size = 20000\nmodel = BiLSTMTagger(vocab_size)",
        inputs={"input_ids": "torch.randint(0, vocab_size, (batch_size, max_seq_length))"},
        desc="`input_ids` 1x128 int64"),
    "lstm_language_model": dict(
        title="2-layer LSTM language model, 650 units, tied embeddings",
        task="natural_language_processing", family="lstm",
        doc="A word-level language model (Zaremba et al.'s medium model): an embedding "
            "(vocabulary 10000, 650 features), a 2-layer torch.nn.LSTM with 650 units and a "
            "decoder to the vocabulary that shares the embedding's weights; next-token "
            "logits at every position.",
        source="https://arxiv.org/abs/1409.2329",
        classes='''
class LSTMLanguageModel(torch.nn.Module):
    def __init__(self, vocab_size, size=650, num_layers=2):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, size)
        self.lstm = torch.nn.LSTM(size, size, num_layers=num_layers, batch_first=True)
        self.decoder = torch.nn.Linear(size, vocab_size)
        self.decoder.weight = self.embedding.weight  # tied weights

    def forward(self, input_ids):
        output, _ = self.lstm(self.embedding(input_ids))
        return self.decoder(output)
''',
        model="vocab_size = 10000\nmodel = LSTMLanguageModel(vocab_size)",
        inputs={"input_ids": "torch.randint(0, vocab_size, (batch_size, max_seq_length))"},
        desc="`input_ids` 1x128 int64"),
    "gru_text_classifier": dict(
        title="embedding + 1-layer GRU text classifier",
        task="natural_language_processing", family="gru",
        doc="A text classifier: token ids into an embedding (vocabulary 20000, 128 features), "
            "a 1-layer torch.nn.GRU (256 hidden units, batch_first), a linear layer with 2 "
            "classes on the last hidden state.",
        classes='''
class GRUClassifier(torch.nn.Module):
    def __init__(self, vocab_size, embedding_dim=128, hidden_size=256, num_classes=2):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.gru = torch.nn.GRU(embedding_dim, hidden_size, batch_first=True)
        self.classifier = torch.nn.Linear(hidden_size, num_classes)

    def forward(self, input_ids):
        _, h = self.gru(self.embedding(input_ids))
        return self.classifier(h[-1])
''',
        model="vocab_size = 20000\nmodel = GRUClassifier(vocab_size)",
        inputs={"input_ids": "torch.randint(0, vocab_size, (batch_size, max_seq_length))"},
        desc="`input_ids` 1x128 int64"),
    "bigru_stacked": dict(
        title="3-layer bidirectional GRU encoder with attention pooling",
        task="natural_language_processing", family="gru",
        doc="A stacked bidirectional encoder: token ids into an embedding (vocabulary 20000, "
            "256 features), a 3-layer bidirectional torch.nn.GRU (2 x 256 hidden units, "
            "dropout between layers, inactive in eval mode), attention pooling over the "
            "sequence and a linear layer with 5 classes.",
        classes='''
class BiGRUEncoder(torch.nn.Module):
    def __init__(self, vocab_size, embedding_dim=256, hidden_size=256, num_classes=5):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.gru = torch.nn.GRU(
            embedding_dim,
            hidden_size,
            num_layers=3,
            bidirectional=True,
            dropout=0.1,
            batch_first=True,
        )
        self.attention = torch.nn.Linear(2 * hidden_size, 1)
        self.classifier = torch.nn.Linear(2 * hidden_size, num_classes)

    def forward(self, input_ids):
        output, _ = self.gru(self.embedding(input_ids))
        weights = torch.softmax(self.attention(output), dim=1)
        return self.classifier((weights * output).sum(1))
''',
        model="vocab_size = 20000\nmodel = BiGRUEncoder(vocab_size)",
        inputs={"input_ids": "torch.randint(0, vocab_size, (batch_size, max_seq_length))"},
        desc="`input_ids` 1x128 int64"),
    "gru_seq2seq": dict(
        title="GRU encoder-decoder (sequence to sequence)",
        task="natural_language_processing", family="gru",
        doc="A sequence-to-sequence model: a 2-layer GRU encoder over the source tokens "
            "(embedding 256, 512 hidden units), whose final state starts a 2-layer GRU "
            "decoder over the target tokens (teacher forcing: the whole target sequence in "
            "one call), and a linear layer to the target vocabulary (8000) at every step. "
            "Source and target both have max_seq_length tokens.",
        classes='''
class GRUSeq2Seq(torch.nn.Module):
    def __init__(self, vocab_size, embedding_dim=256, hidden_size=512, num_layers=2):
        super().__init__()
        self.source_embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.target_embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.encoder = torch.nn.GRU(embedding_dim, hidden_size, num_layers, batch_first=True)
        self.decoder = torch.nn.GRU(embedding_dim, hidden_size, num_layers, batch_first=True)
        self.output = torch.nn.Linear(hidden_size, vocab_size)

    def forward(self, source_ids, target_ids):
        _, state = self.encoder(self.source_embedding(source_ids))
        output, _ = self.decoder(self.target_embedding(target_ids), state)
        return self.output(output)
''',
        model="vocab_size = 8000\nmodel = GRUSeq2Seq(vocab_size)",
        inputs={"source_ids": "torch.randint(0, vocab_size, (batch_size, max_seq_length))",
                "target_ids": "torch.randint(0, vocab_size, (batch_size, max_seq_length))"},
        desc="`source_ids` 1x128 int64, `target_ids` 1x128 int64"),
    "rnn_tanh": dict(
        title="2-layer Elman RNN (tanh) on a vector sequence",
        task="time_series", family="rnn",
        doc="An Elman recurrent network: a 2-layer torch.nn.RNN (tanh, 64 hidden units) over "
            "a sequence of 32-feature vectors (max_seq_length steps), a linear layer with 4 "
            "outputs at every step.",
        classes='''
class ElmanRNN(torch.nn.Module):
    def __init__(self, input_size=32, hidden_size=64, num_outputs=4):
        super().__init__()
        self.rnn = torch.nn.RNN(input_size, hidden_size, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(hidden_size, num_outputs)

    def forward(self, x):
        output, _ = self.rnn(x)
        return self.head(output)
''',
        model="input_size = 32\nmodel = ElmanRNN(input_size)",
        inputs={"x": "torch.randn(batch_size, max_seq_length, input_size)"},
        desc="`x` 1x128x32 float32"),
    "lstm_forecaster": dict(
        title="stacked LSTM time-series forecaster",
        task="time_series", family="lstm",
        doc="A multivariate time-series forecaster: a 3-layer torch.nn.LSTM (128 hidden "
            "units) over max_seq_length steps of 8 variables, a linear layer predicting the "
            "next 24 steps of all 8 variables from the last hidden state.",
        classes='''
class LSTMForecaster(torch.nn.Module):
    def __init__(self, num_variables=8, hidden_size=128, horizon=24):
        super().__init__()
        self.num_variables, self.horizon = num_variables, horizon
        self.lstm = torch.nn.LSTM(num_variables, hidden_size, num_layers=3, batch_first=True)
        self.head = torch.nn.Linear(hidden_size, horizon * num_variables)

    def forward(self, x):
        output, _ = self.lstm(x)
        return self.head(output[:, -1]).view(-1, self.horizon, self.num_variables)
''',
        model="num_variables = 8\nmodel = LSTMForecaster(num_variables)",
        inputs={"x": "torch.randn(batch_size, max_seq_length, num_variables)"},
        desc="`x` 1x128x8 float32"),
    "conv_lstm_classifier": dict(
        title="1-d CNN + bidirectional LSTM sequence classifier",
        task="time_series", family="lstm",
        doc="A CNN-LSTM sequence classifier (activity recognition style): two 1-d "
            "convolutions (64 channels, kernel 5, ReLU) over max_seq_length steps of 9 "
            "sensor channels, a bidirectional torch.nn.LSTM (2 x 64 units) and a linear "
            "layer with 6 classes on the mean over time.",
        classes='''
class ConvLSTMClassifier(torch.nn.Module):
    def __init__(self, num_channels=9, num_classes=6):
        super().__init__()
        self.conv = torch.nn.Sequential(
            torch.nn.Conv1d(num_channels, 64, kernel_size=5, padding=2),
            torch.nn.ReLU(),
            torch.nn.Conv1d(64, 64, kernel_size=5, padding=2),
            torch.nn.ReLU(),
        )
        self.lstm = torch.nn.LSTM(64, 64, bidirectional=True, batch_first=True)
        self.classifier = torch.nn.Linear(128, num_classes)

    def forward(self, x):
        h = self.conv(x.transpose(1, 2)).transpose(1, 2)
        output, _ = self.lstm(h)
        return self.classifier(output.mean(1))
''',
        model="sensor_channels = 9\nmodel = ConvLSTMClassifier(sensor_channels)",
        inputs={"x": "torch.randn(batch_size, max_seq_length, sensor_channels)"},
        desc="`x` 1x128x9 float32"),
}

GRAPH_PARAMS = {  # parameter counts (measured)
    "appnp": 92_231,
    "bigru_stacked": 8_278_022,
    "bilstm_tagger": 3_450_009,
    "conv_lstm_classifier": 90_822,
    "gat": 92_302,
    "gcn": 23_063,
    "gcn_deep": 25_239,
    "gin": 157_775,
    "graphsage": 46_103,
    "gru_seq2seq": 13_717_312,
    "gru_text_classifier": 2_856_962,
    "lstm_forecaster": 359_616,
    "lstm_language_model": 13_280_400,
    "lstm_text_classifier": 2_955_778,
    "rnn_tanh": 14_852,
    "sgc": 10_038,
}


def graph_scripts() -> Iterator[Script]:
    for name, g in GRAPH.items():
        yield Script(
            corpus="graph", name=name,
            labels={"author": "mlprof", "task": "graph", "family": g["family"],
                    "kind": "node_classification" if name != "gin" else "graph_classification"},
            doc=g["doc"] + "\n\nThe inputs are a batch of random graphs of 2708 nodes (Cora's "
                "size): node features `x` (batch, nodes, in_channels) and a dense 0/1 "
                "adjacency matrix `adjacency` (batch, nodes, nodes), symmetric, about 5 "
                "neighbours per node. Written for mlprof in plain torch (no torch_geometric).",
            source=g["source"], imports=[], params=g["params"], classes=g["classes"],
            model=GRAPH_INPUTS.strip() + "\n" + g["model"],
            inputs={"x": "torch.rand(batch_size, num_nodes, in_channels)",
                    "adjacency": "adjacency"},
            title=g["title"], n_params=GRAPH_PARAMS.get(name, 0),
            input_desc="`x` 1x2708x1433 float32, `adjacency` 1x2708x2708 float32",
            pre_inputs="adjacency = " + GRAPH_ADJ,
        )
    for name, r in RECURRENT.items():
        yield Script(
            corpus="recurrent", name=name,
            labels={"author": "mlprof", "task": r["task"], "family": r["family"],
                    "kind": "recurrent"},
            doc=r["doc"] + "\n\nWritten for mlprof in plain torch, random weights.",
            source=r.get("source", "written for mlprof; "
                         "https://pytorch.org/docs/stable/nn.html#recurrent-layers"),
            imports=[], params=TEXT, classes=r["classes"], model=r["model"],
            inputs=r["inputs"], title=r["title"], n_params=GRAPH_PARAMS.get(name, 0),
            input_desc=r["desc"],
        )


# ------------------------------------------------------------------------------------------------
# --survey: recount the candidates with the installed libraries (slow-ish: builds every model on
# torch.device("meta")). Prints rows in the tables' format; picking and checking them is manual
# (each new script must run, see README.md "Checking the corpus").


def _meta_params(build) -> int | None:
    import torch

    try:
        with torch.device("meta"):
            model = build()
    except Exception:
        try:
            model = build()  # some builders compute sizes from tensors: build for real
        except Exception:
            return None
    return sum(p.numel() for p in model.parameters())


def survey(library: str) -> None:
    import warnings

    warnings.simplefilter("ignore")
    if library == "timm":
        import timm

        def arch(name: str) -> str:
            name = re.sub(r"^(tf_|tv_|gluon_|legacy_|ens_adv_|adv_)", "", name)
            return re.match(r"[a-z]+(v\d)?", name).group(0)

        for module in timm.list_modules():
            rows = []
            for name in timm.list_models(module=module):
                if name.startswith("test_"):
                    continue
                n = _meta_params(lambda name=name: timm.create_model(name, pretrained=False))
                if n is not None:
                    cfg = timm.get_pretrained_cfg(name)
                    size = (cfg.input_size if cfg else None) or (3, 224, 224)
                    rows.append((n, name, size, bool(cfg and cfg.fixed_input_size)))
            rows.sort()
            small = [r for r in rows if r[0] <= 100e6] or rows[:1]
            seen: dict[str, tuple] = {}
            for r in small:
                seen.setdefault(arch(r[1]), r)
            for n, name, size, fixed in sorted({small[0], *seen.values()}):
                print(f'    ("{name}", "{module}", {n}, {size[1]}, {size[2]}, {fixed}),')
    elif library == "torchvision":
        import torchvision.models as tvm

        for module, kind in [(tvm, "classification"), (tvm.detection, "detection"),
                             (tvm.segmentation, "segmentation"), (tvm.video, "video")]:
            for name in tvm.list_models(module=module):
                kw = {"weights": None}
                if kind in ("detection", "segmentation"):
                    kw["weights_backbone"] = None
                n = _meta_params(lambda name=name, kw=kw: tvm.get_model(name, **kw))
                print(f'    ("{name}", "{kind}", {n}),')
    elif library == "transformers":
        import inspect

        import transformers
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
        from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

        for mt, model_cls in sorted(MODEL_MAPPING_NAMES.items()):
            model_cls = model_cls if isinstance(model_cls, str) else model_cls[0]
            try:
                config_cls = getattr(transformers, CONFIG_MAPPING_NAMES[mt])
                cls = getattr(transformers, model_cls)
                inputs = [p for p in inspect.signature(cls.forward).parameters
                          if p in ("input_ids", "pixel_values", "input_values",
                                   "input_features", "decoder_input_ids")]
                n = _meta_params(lambda c=cls, cc=config_cls: c(cc()))
                d = config_cls().to_dict()
                small = [k for k in SMALL if k in d and isinstance(d[k], int)]
                kw = {k: SMALL[k] for k in small}
                n_small = (_meta_params(lambda c=cls, cc=config_cls, kw=kw: c(cc(**kw)))
                           if n and n > 150e6 else None)
            except Exception as e:
                print(f"# {mt}: {type(e).__name__}: {str(e)[:80]}")
                continue
            print(f"# {mt} {config_cls.__name__} {model_cls} inputs={','.join(inputs)} "
                  f"params={n} small={n_small} ({' '.join(small) if n_small else ''})")
    else:
        raise SystemExit(f"--survey: timm, torchvision or transformers, not {library!r}")


def all_scripts() -> list[Script]:
    scripts = [*timm_scripts(), *torchvision_scripts(), *transformers_scripts(),
               *graph_scripts()]
    out = []
    for s in scripts:
        if s.name in HAND_WRITTEN.get(s.corpus, ()):
            continue
        out.append(s)
    keys = [(s.corpus, s.name) for s in out]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise SystemExit(f"duplicate scripts: {sorted(dup)}")
    return sorted(out, key=lambda s: (s.corpus, s.name))


#: generated scripts whose model does not export with a plain torch.onnx.export(..., dynamo=False,
#: opset_version=18, dynamic batch axis) plus one ONNX Runtime run (torch, onnxruntime versions
#: of requirements.txt); listed in INDEX.md. The scripts themselves run.
EXPORT_FAILS = {
    "timm/bat_resnext26ts":
        "SymbolicValueError: adaptive_max_pool2d: input size not accessible",
    "timm/csatv2":
        "SymbolicValueError: adaptive_avg_pool2d: input size not accessible",
    "timm/gemma4_vit_167m":
        "UnsupportedOperatorError: aten::rms_norm cannot be exported (opset 18)",
    "timm/halo2botnet50ts_256":
        "SymbolicValueError: Unfold: input size not accessible",
    "timm/halonet_h1":
        "SymbolicValueError: Unfold: input size not accessible",
    "timm/haloregnetz_b":
        "SymbolicValueError: Unfold: input size not accessible",
    "timm/lamhalobotnet50ts_256":
        "SymbolicValueError: Unfold: input size not accessible",
    "timm/sehalonet33ts":
        "SymbolicValueError: Unfold: input size not accessible",
    "timm/volo_d1_224":
        "TypeError while exporting col2im (nn.Fold): 'NoneType' object is not subscriptable",
    "transformers/bamba":
        "ONNX Runtime cannot load the model: Transpose node /inner/layers.0/mamba/Transpose_9: "
        "TypeInferenceError",
    "transformers/canine":
        "ONNX Runtime run fails in FusedMatMul node "
        "/inner/final_char_encoder/layer.0/attention/self/MatMul/MatMulScaleFusion/",
    "transformers/cohere":
        "ONNX Runtime run fails in Reshape node /inner/layers.0/self_attn/Reshape_2",
    "transformers/diffllama":
        "UnsupportedOperatorError: aten::rms_norm cannot be exported (opset 18)",
    "transformers/falcon_h1":
        "ONNX Runtime cannot load the model: Transpose node /inner/layers.0/mamba/Transpose_9: "
        "TypeInferenceError",
    "transformers/fnet":
        "UnsupportedOperatorError: aten::fft_fftn cannot be exported (opset 18)",
    "transformers/glm4_moe":
        "UnsupportedOperatorError: aten::histc cannot be exported (opset 18)",
    "transformers/gpt_oss":
        "UnsupportedOperatorError: aten::histc cannot be exported (opset 18)",
    "transformers/granitemoehybrid":
        "UnsupportedOperatorError: aten::histc cannot be exported (opset 18)",
    "transformers/jamba":
        "UnsupportedOperatorError: aten::histc cannot be exported (opset 18)",
    "transformers/llama4_text":
        "UnsupportedOperatorError: aten::polar cannot be exported (opset 18)",
    "transformers/minimax":
        "UnsupportedOperatorError: aten::histc cannot be exported (opset 18)",
    "transformers/mixtral":
        "UnsupportedOperatorError: aten::histc cannot be exported (opset 18)",
    "transformers/mobilevitv2":
        "TypeError while exporting col2im (nn.Fold): 'NoneType' object is not subscriptable",
    "transformers/nemotron_h":
        "UnsupportedOperatorError: aten::histc cannot be exported (opset 18)",
    "transformers/olmoe":
        "UnsupportedOperatorError: aten::histc cannot be exported (opset 18)",
    "transformers/phimoe":
        "UnsupportedOperatorError: aten::histc cannot be exported (opset 18)",
    "transformers/qwen2_moe":
        "UnsupportedOperatorError: aten::histc cannot be exported (opset 18)",
    "transformers/qwen3_next":
        "UnsupportedOperatorError: aten::linalg_solve_triangular cannot be exported (opset 18)",
    "transformers/reformer":
        "RuntimeError: unordered_map::at",
    "transformers/tapas":
        "OnnxExporterError: ONNX does not support include_self=False for scatter_reduce",
}


def index(scripts: list[Script]) -> str:
    lines = [
        "# Index of the generated model scripts",
        "",
        "Written by `python models/generate.py`; do not edit. One line per generated script "
        "(the hand-written ones are listed in README.md). Parameters: unique parameters "
        "(`sum(p.numel() for p in model.parameters())`); inputs at the default parameters "
        "(batch size 1).",
        "",
        "| corpus | file | model | parameters | inputs (defaults) |",
        "|---|---|---|---:|---|",
    ]
    for s in scripts:
        lines.append(f"| {s.corpus} | `{s.name}.py` | {s.title} | {s.n_params:,} | "
                     f"{s.input_desc} |")
    counts: dict[str, int] = {}
    for s in scripts:
        counts[s.corpus] = counts.get(s.corpus, 0) + 1
    lines += ["", f"{len(scripts)} generated scripts: " +
              ", ".join(f"{c} {n}" for c, n in sorted(counts.items())) + ".", ""]
    lines += [
        "## Plain ONNX export fails",
        "",
        "These models run, but a plain `torch.onnx.export(model, args, f, dynamo=False, "
        "opset_version=18, dynamic_axes=<batch axis>)` followed by one ONNX Runtime run at "
        "batch size 1 fails (first line of the error):",
        "",
        "| script | error |",
        "|---|---|",
        *[f"| `{k}.py` | {v} |" for k, v in sorted(EXPORT_FAILS.items())],
        "",
    ]
    return "\n".join(lines)


def outputs() -> dict[Path, str]:
    scripts = all_scripts()
    files = {s.path: s.render() for s in scripts}
    files[MODELS / "INDEX.md"] = index(scripts)
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if a generated file on disk differs from what would be written")
    ap.add_argument("--list", action="store_true", help="list the generated scripts")
    ap.add_argument("--survey", metavar="LIBRARY",
                    help="print the candidate models of timm, torchvision or transformers")
    args = ap.parse_args(argv)
    if args.survey:
        survey(args.survey)
        return 0
    files = outputs()
    if args.list:
        for path in files:
            if path.suffix == ".py":
                print(path.relative_to(MODELS))
        return 0
    if args.check:
        bad = [p for p, text in files.items()
               if not p.exists() or p.read_text() != text]
        for p in bad:
            print(f"differs: {p.relative_to(MODELS)}", file=sys.stderr)
        if bad:
            print(f"{len(bad)} generated file(s) differ: run python models/generate.py",
                  file=sys.stderr)
        return 1 if bad else 0
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    print(f"{len(files) - 1} generated scripts and INDEX.md written under {MODELS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
