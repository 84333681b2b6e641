"""ONNX element types the fuzzer generates, their numpy types and the schema type strings."""
import numpy as np
from onnx import TensorProto as TP

NUMPY = {
    TP.FLOAT: np.float32, TP.DOUBLE: np.float64, TP.FLOAT16: np.float16,
    TP.INT8: np.int8, TP.INT16: np.int16, TP.INT32: np.int32, TP.INT64: np.int64,
    TP.UINT8: np.uint8, TP.UINT16: np.uint16, TP.UINT32: np.uint32, TP.UINT64: np.uint64,
    TP.BOOL: np.bool_,
}
# 'tensor(float)' -> TensorProto.FLOAT, only for the types above (no bfloat16, float8, int4,
# string or complex: numpy has no array type for them, or the comparison would be meaningless).
TYPE_STR = {
    "tensor(float)": TP.FLOAT, "tensor(double)": TP.DOUBLE, "tensor(float16)": TP.FLOAT16,
    "tensor(int8)": TP.INT8, "tensor(int16)": TP.INT16, "tensor(int32)": TP.INT32,
    "tensor(int64)": TP.INT64, "tensor(uint8)": TP.UINT8, "tensor(uint16)": TP.UINT16,
    "tensor(uint32)": TP.UINT32, "tensor(uint64)": TP.UINT64, "tensor(bool)": TP.BOOL,
}
FLOATS = (TP.FLOAT, TP.DOUBLE, TP.FLOAT16)
SIGNED = (TP.INT8, TP.INT16, TP.INT32, TP.INT64)
UNSIGNED = (TP.UINT8, TP.UINT16, TP.UINT32, TP.UINT64)
INTS = SIGNED + UNSIGNED
NUMERIC = FLOATS + INTS
ALL = NUMERIC + (TP.BOOL,)


def name(dt):
    return TP.DataType.Name(dt).lower()


def np_type(dt):
    return NUMPY[dt]


def is_float(dt):
    return dt in FLOATS


def from_numpy(npdt):
    for k, v in NUMPY.items():
        if np.dtype(v) == np.dtype(npdt):
            return k
    raise KeyError(npdt)
