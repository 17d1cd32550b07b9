#pragma once
// The whole public API of xlite.
#include "xlite/autograd.h"
#include "xlite/debug.h"
#include "xlite/device.h"
#include "xlite/dtype.h"
#include "xlite/error.h"
#include "xlite/factories.h"
#include "xlite/lazy.h"
#include "xlite/memory.h"
#include "xlite/metrics.h"
#include "xlite/ops.h"
#include "xlite/scalar.h"
#include "xlite/tensor.h"
