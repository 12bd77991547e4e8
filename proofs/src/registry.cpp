#include "poolspec/proofs/proof.hpp"
#include "shape_proofs.hpp"

namespace poolspec::proofs {

const std::vector<Proof>& all_proofs() {
  static const std::vector<Proof> proofs = [] {
    std::vector<Proof> p;
    add_shape_proofs(p);
    add_divisor_proofs(p);
    add_range_proofs(p);
    add_xs3_proofs(p);
    add_tosa_proofs(p);
    add_stablehlo_proofs(p);
    add_mutant_proofs(p);
    return p;
  }();
  return proofs;
}

}  // namespace poolspec::proofs
