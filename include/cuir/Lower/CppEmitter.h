//===- CppEmitter.h - CuIR values as expressions of the source --*- C++ -*-===//
//
// Lowering writes new code in the source kernel's own terms: a value the
// lift named (a NameLoc: "m_start", "params.seqlen_kv", "BLOCK_N") is
// written by that name; a value computed by ops that a transform inserted is
// written as the C++ expression of those ops over named values.
//
//===----------------------------------------------------------------------===//

#ifndef CUIR_LOWER_CPPEMITTER_H
#define CUIR_LOWER_CPPEMITTER_H

#include "cuir/Support/IntRanges.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>

namespace mlir::cuir {

/// math.tanh is written as this function: the SFU's tanh.approx.f32 (one
/// instruction; max relative error 2^-11), the cost a softcap can afford.
/// Its definition is kTanhApproxHelper, which the lowering adds to the source.
inline constexpr const char *kTanhApproxName = "cuir_tanh_approx";
extern const char *const kTanhApproxHelper;

/// The definitions of the lowering's device helpers (cuir_floordivsi_i32,
/// cuir_round_bf16, ...) that `text` calls, in a fixed order; "" if none.
std::string deviceHelpersUsedBy(llvm::StringRef text);

/// The source name a location gives a value, if any.
std::optional<std::string> sourceNameOf(Location loc);

class CppEmitter {
public:
  /// Values given names by the caller (block arguments of a region being
  /// emitted as a function, temporaries already declared).
  llvm::DenseMap<Value, std::string> names;
  /// Kernel parameters of role param:<x> are written `params.<x>`.
  std::string paramsName = "params";
  /// Whether a value the lift named (its NameLoc) is written by that name;
  /// off for code outside the kernel, which sees none of the kernel's names.
  bool sourceNames = true;

  /// The C++ expression of `v`, or failure with `why` set.
  FailureOr<std::string> expr(Value v, std::string &why);
  /// The address `load` reads (its tensor plus the flat index), or failure
  /// with `why` set.
  FailureOr<std::string> address(memref::LoadOp load, std::string &why);
  /// The C++ type of `t`: int for i32, int64_t for i64, bool for i1, float
  /// for f32 (and for f16/bf16 values, held in floats); int for index, whose
  /// values typeOf gives int64_t where an int may not hold them.
  static FailureOr<std::string> type(Type t);
  /// The C++ type of `v`: type(v's type), but int64_t for an index value
  /// that an int may not hold (IntRanges: index is 64 bits, as the
  /// interpreter computes it).
  FailureOr<std::string> typeOf(Value v);
  /// Whether every value of index or integer value `v` fits a C++ int.
  bool fitsInt(Value v);
  /// Whether cast `op` is written as its operand: both sides are the same
  /// C++ type and the value does not change (index <-> i32, extf).
  bool isNoOpCast(Operation *op);

  /// A comparison `(lhs0 +|- lhs1) pred rhs` of values that all fit an int.
  struct NarrowedCompare {
    Value lhs0, lhs1;
    bool plus;
    arith::CmpIPredicate pred;
    Value rhs;
  };
  /// A signed comparison of index values, one of them a sum or difference
  /// that an int may not hold, restated with a term moved across so that
  /// every value it computes fits one (`k >= q - l` as `q - k <= l`);
  /// nullopt where no such form exists. The comparison is written so.
  std::optional<NarrowedCompare> narrowedCompare(arith::CmpIOp c);

private:
  /// Whether index op `op` computes at 64 bits: its result or an index
  /// operand may not fit an int.
  bool wideIndexOp(Operation *op);
  /// The C++ of the op that defines a value (expr, less the names).
  FailureOr<std::string> opExpr(Operation *op, std::string &why);
  FailureOr<std::string> castExpr(Operation *op, const std::string &x,
                                  std::string &why);
  /// divui, remui, ceildivui, minui, maxui: through the unsigned type of
  /// their width where an operand may be negative.
  FailureOr<std::string> unsignedOp(Operation *op, std::string &why);
  FailureOr<std::string> argument(BlockArgument arg, std::string &why);
  FailureOr<SmallVector<std::string>> operands(Operation *op,
                                               std::string &why);
  FailureOr<std::string> constant(arith::ConstantOp c, std::string &why);
  /// Constants, comparisons, selects and loads.
  FailureOr<std::string> special(Operation *op, std::string &why);

  /// The Source CuIR's own values are the source's ints (isSourceValue).
  IntRanges ranges{isSourceValue};

public:
  /// Whether `v` is a value of the lifted source kernel, which the source
  /// holds in an int: an argument or a value of an op in a cuir.kernel that
  /// no transform inserted, or that the scores or blocks rewrite inserted to
  /// restate the source's own coordinates (a tile's first key, a listed
  /// tile). The variant's ops and the split's bounds are not.
  static bool isSourceValue(Value v);
};

} // namespace mlir::cuir

#endif // CUIR_LOWER_CPPEMITTER_H
