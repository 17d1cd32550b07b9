#pragma once
// Typed attributes: each op's row in the op table names one schema below, the list of attributes its
// nodes carry. A schema is a struct with a field per attribute, so building a node names every field
// (`PadAttrs{.lo = lo, .hi = hi, .value = 0}.to_attrs()`) and reading one is `PadAttrs::of(instr.attrs)`,
// instead of keys assembled by hand at each site. infer_type checks a node's attributes against its
// op's schema, so text IR with a missing, extra or mistyped attribute is refused before any layer sees it.
//
// List fields are spans: read from Attrs they point into it, and built from vectors they point into
// those; to_attrs() copies them. Keep a schema struct no longer than what it points into.
#include <cstdint>
#include <span>
#include <string_view>

#include "ir/attrs.h"
#include "xlite/dtype.h"

namespace xlite::ir {

enum class OpId : uint16_t;

// F(key, kind): the attributes of each schema, named by their AttrKey (ir/attrs.h).
#define XLITE_NO_ATTRS(F)
#define XLITE_PARAMETER_ATTRS(F) F(index, Int)
#define XLITE_CONSTANT_ATTRS(F) F(value, Float) F(dtype, DTypeName)
#define XLITE_IOTA_ATTRS(F) F(shape, Ints) F(dim, Int) F(dtype, DTypeName)
#define XLITE_RANDOM_ATTRS(F) F(shape, Ints) F(dtype, DTypeName)
#define XLITE_CONVERT_ATTRS(F) F(dtype, DTypeName)
#define XLITE_REDUCE_ATTRS(F) F(dims, Ints) F(keepdim, Bool)
#define XLITE_ARG_REDUCE_ATTRS(F) F(dim, Int) F(keepdim, Bool)
#define XLITE_RESHAPE_ATTRS(F) F(shape, Ints)
#define XLITE_TRANSPOSE_ATTRS(F) F(perm, Ints)
#define XLITE_BROADCAST_ATTRS(F) F(shape, Ints) F(dims, Ints)
#define XLITE_SLICE_ATTRS(F) F(start, Ints) F(limit, Ints) F(stride, Ints)
#define XLITE_DIM_ATTRS(F) F(dim, Int)
#define XLITE_SORT_ATTRS(F) F(dim, Int) F(descending, Bool)
#define XLITE_PAD_ATTRS(F) F(lo, Ints) F(hi, Ints) F(value, Float)
#define XLITE_FLIP_ATTRS(F) F(dims, Ints)
#define XLITE_CONV_ATTRS(F) F(stride, Ints) F(lo, Ints) F(hi, Ints) F(dilation, Ints) F(groups, Int)
#define XLITE_CUSTOM_CALL_ATTRS(F) F(kernel, String) F(args, String)
#define XLITE_CUSTOM_OUTPUT_ATTRS(F) F(index, Int) F(offset, Int) F(shape, Ints) F(dtype, DTypeName)

// X(struct name, attribute list)
#define XLITE_ATTR_SCHEMAS(X)                 \
  X(NoAttrs, XLITE_NO_ATTRS)                  \
  X(ParameterAttrs, XLITE_PARAMETER_ATTRS)    \
  X(ConstantAttrs, XLITE_CONSTANT_ATTRS)      \
  X(IotaAttrs, XLITE_IOTA_ATTRS)              \
  X(RandomAttrs, XLITE_RANDOM_ATTRS)          \
  X(ConvertAttrs, XLITE_CONVERT_ATTRS)        \
  X(ReduceAttrs, XLITE_REDUCE_ATTRS)          \
  X(ArgReduceAttrs, XLITE_ARG_REDUCE_ATTRS)   \
  X(ReshapeAttrs, XLITE_RESHAPE_ATTRS)        \
  X(TransposeAttrs, XLITE_TRANSPOSE_ATTRS)    \
  X(BroadcastAttrs, XLITE_BROADCAST_ATTRS)    \
  X(SliceAttrs, XLITE_SLICE_ATTRS)            \
  X(DimAttrs, XLITE_DIM_ATTRS)                \
  X(SortAttrs, XLITE_SORT_ATTRS)              \
  X(PadAttrs, XLITE_PAD_ATTRS)                \
  X(FlipAttrs, XLITE_FLIP_ATTRS)              \
  X(ConvAttrs, XLITE_CONV_ATTRS)              \
  X(CustomCallAttrs, XLITE_CUSTOM_CALL_ATTRS) \
  X(CustomOutputAttrs, XLITE_CUSTOM_OUTPUT_ATTRS)

template <AttrKind kind>
struct AttrField;
template <>
struct AttrField<AttrKind::Int> {
  using type = int64_t;
};
template <>
struct AttrField<AttrKind::Bool> {
  using type = bool;
};
template <>
struct AttrField<AttrKind::Float> {
  using type = double;
};
template <>
struct AttrField<AttrKind::Ints> {
  using type = std::span<const int64_t>;
};
template <>
struct AttrField<AttrKind::String> {
  using type = std::string_view;
};
template <>
struct AttrField<AttrKind::DTypeName> {
  using type = DType;
};

#define XLITE_ATTR_FIELD(key, kind) typename AttrField<AttrKind::kind>::type key{};
#define XLITE_DECLARE_SCHEMA(Name, FIELDS)                                                 \
  struct Name {                                                                            \
    FIELDS(XLITE_ATTR_FIELD)                                                               \
    /* Throws xlite::Error naming the attribute when one is missing or of another kind. */ \
    static Name of(const Attrs& attrs);                                                    \
    Attrs to_attrs() const;                                                                \
    /* The keys, in declaration order. */                                                  \
    static std::span<const AttrKey> keys();                                                \
  };
XLITE_ATTR_SCHEMAS(XLITE_DECLARE_SCHEMA)
#undef XLITE_DECLARE_SCHEMA
#undef XLITE_ATTR_FIELD

// The attribute keys a node of this op carries: exactly these, no others.
std::span<const AttrKey> attr_schema(OpId op);
// Throws xlite::Error("[op] ...") naming the first attribute missing, extra or of the wrong kind.
void check_attr_schema(OpId op, const Attrs& attrs);

}  // namespace xlite::ir
