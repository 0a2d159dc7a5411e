"""QuantizeModel: an ONNX model converted to a lower precision (fp16, int8-dynamic,
int8-static), once, as an artifact that the measurements of that precision require."""

from __future__ import annotations

import logging

from mlprof import ingest
from mlprof.errors import MLProfError
from mlprof.results import layout
from mlprof.runtimes.precisions import CONVERTED_PRECISIONS, listed
from mlprof.tasks.export import ExportOnnx
from mlprof.tasks.framework.base import Requirements
from mlprof.tasks.framework.mixins import (
    ExportMixin,
    ModelMixin,
    PrecisionMixin,
    ScriptMixin,
    refuse_given,
)
from mlprof.tasks.framework.parameters import PrecisionParameter
from mlprof.util import write_json_atomic, write_text_atomic

logger = logging.getLogger("mlprof")

#: the precisions a converted model is made for (THE precision table's)
CONVERTED = CONVERTED_PRECISIONS


class QuantizeModel(ModelMixin, ScriptMixin, ExportMixin, PrecisionMixin):
    """Convert one ONNX model (a YAML/ONNX model file, or a script's fp32 ONNX export) to
    ``--precision`` fp16, int8-dynamic or int8-static (``--calibration-batches`` for the
    last) with ONNX Runtime's tools (:mod:`mlprof.model.precision`).

    Writes ``model.onnx`` (the converted graph), for a YAML model ``model.yaml`` (the model
    file the measurements read: the YAML's name, label, inputs and outputs, with the converted
    graph) and ``quantize.json`` (the recipe: tool and version, its settings, the calibration,
    the conversion time, the sizes and operator counts before and after). MeasureRuntime,
    ProfileRuntime and the plots require it like an export: it is made once per model,
    precision and calibration, and reused by every runtime, batch size and version of theirs.
    """

    reqs = Requirements(ExportOnnx=ExportOnnx)

    precision = PrecisionParameter(default="int8-dynamic", description="the precision to "
                                   f"convert to: {listed(CONVERTED_PRECISIONS)}; default: "
                                   "int8-dynamic")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.precision not in CONVERTED:
            raise MLProfError(f"QuantizeModel makes {', '.join(CONVERTED)} models; "
                              f"{self.precision} needs no converted model", field="--precision")
        if self.model_spec.model_kind not in ("onnx", "script"):
            raise MLProfError("QuantizeModel converts ONNX models (a YAML/ONNX model file or a "
                              "script's export)", self.model_spec.spec_file, "--model-file")
        if not self.is_script:
            refuse_given(self, self.SCRIPT_PARAMS + self.EXPORT_PARAMS,
                         "applies to model scripts (.py) only", self.model_spec.spec_file)

    def requires(self):
        if not self.is_script:
            return {}
        return {"export": self.reqs.ExportOnnx.req(self, precision="fp32")}

    def store_parts(self) -> dict[str, str]:
        export = None
        if self.is_script:
            export_task = self.requires()["export"]
            export = (export_task.export_key(export_task.precision), self.script_key())
        return {"model": self.model_segment_of(self.resolved_model_name, self.model_spec),
                "settings": layout.quantize_settings_segment(self.precision_key(), export)}

    def output(self):
        return self.declared_outputs(yaml=self.writes_yaml)

    @property
    def writes_yaml(self) -> bool:
        """Whether the model is a YAML file, whose converted copy is measured (an ONNX file or
        a script's export is measured as the converted ONNX file itself)."""
        return not self.is_script and self.model_spec.spec_file != self.model_spec.file

    def measured(self) -> str:
        """The file a measurement of the converted model reads."""
        return self.output()["yaml" if self.writes_yaml else "onnx"].path

    def source(self) -> str:
        """The fp32 ONNX file that is converted (the model's graph, or the script's export)."""
        if not self.is_script:
            return self.model_spec.file
        return self.requires()["export"].output()["onnx"].path

    def record(self) -> dict | None:
        """The recipe (``quantize.json``), None while there is none."""
        try:
            record = ingest.load_json(self.output()["json"].path)
        except MLProfError:
            return None
        return record if isinstance(record, dict) else None

    def run(self):
        from mlprof.measure.isolate import run_isolated
        from mlprof.measure.quantize import quantize_model
        from mlprof.model.precision import converted_spec_yaml

        if self.is_script:
            export = self.requires()["export"].record() or {}
            if export.get("batch") == "static":
                raise MLProfError("this model is measured on one static graph per batch size; "
                                  f"{self.precision} of static graphs is not supported yet",
                                  self.model_spec.spec_file, "--precision")
        outputs = self.output()
        source = self.source()
        name = self.resolved_model_name
        recipe = run_isolated(quantize_model, {
            "spec_file": self.model_spec.spec_file, "source": source,
            "out_onnx": outputs["onnx"].path, "precision": self.precision,
            "calibration_batches": self.resolved_calibration_batches,
        }, label=f"{self.precision} conversion of {name}")
        if self.writes_yaml:
            write_text_atomic(outputs["yaml"].path,
                              converted_spec_yaml(self.model_spec, "model.onnx", self.precision))
        recipe["model_file"] = self.model_file
        # the ONNX file and the YAML are in place; the JSON completes the result
        write_json_atomic(outputs["json"].path, recipe)
        logger.info("converted %s to %s in %.2f s (%s)", name, self.precision,
                    recipe["convert_s"], recipe["tool"].rpartition(".")[2])

