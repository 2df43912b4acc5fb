"""Reads DLPack capsules from the consumer's side, with ctypes: the structs of dlpack.h v1.0,
declared here independently of the extension's own so the tests check its layout."""

import ctypes


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))),
]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

IS_COPIED = 1 << 1

# PyCapsule_SetName keeps the pointer it is given: the names must outlive every capsule.
_USED_NAMES = {"dltensor": b"used_dltensor", "dltensor_versioned": b"used_dltensor_versioned"}

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]
_set_name = ctypes.pythonapi.PyCapsule_SetName
_set_name.restype = ctypes.c_int
_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]


def capsule_name(capsule):
    return _get_name(capsule).decode()


def managed(capsule):
    """The DLManagedTensor(Versioned) a capsule holds, as its name says."""
    name = capsule_name(capsule)
    kind = DLManagedTensorVersioned if name == "dltensor_versioned" else DLManagedTensor
    return kind.from_address(_get_pointer(capsule, name.encode()))


def describe(capsule):
    """What a consumer reads: the capsule's name and the tensor's fields."""
    tensor = managed(capsule)
    dl = tensor.dl_tensor
    answer = {
        "name": capsule_name(capsule),
        "data": dl.data or 0,
        "device": (dl.device.device_type, dl.device.device_id),
        "ndim": dl.ndim,
        "dtype": (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes),
        "shape": [dl.shape[i] for i in range(dl.ndim)],
        "strides": bool(dl.strides),
        "byte_offset": dl.byte_offset,
    }
    if isinstance(tensor, DLManagedTensorVersioned):
        answer["version"] = (tensor.version.major, tensor.version.minor)
        answer["flags"] = tensor.flags
    return answer


def consume(capsule):
    """Does what a consumer does: renames the capsule "used_..." and answers its deleter's call,
    to be made when the consumer lets go."""
    tensor = managed(capsule)
    _set_name(capsule, _USED_NAMES[capsule_name(capsule)])
    pointer = ctypes.pointer(tensor)
    return lambda: tensor.deleter(pointer)
