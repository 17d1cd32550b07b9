"""dtype objects named as PyTorch names them: xl.float32, xl.int64, xl.bool, with the short aliases."""
from ._xlite import dtype

float32 = dtype.float32
float64 = dtype.float64
float16 = dtype.float16
bfloat16 = dtype.bfloat16
int32 = dtype.int32
int64 = dtype.int64
uint8 = dtype.uint8
bool = getattr(dtype, "bool")
float = float32
double = float64
half = float16
long = int64
int = int32

