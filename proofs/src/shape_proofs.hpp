// The proof families, each adding its proofs to the registry (all_proofs()).
#pragma once

#include <vector>

#include "poolspec/proofs/proof.hpp"

namespace poolspec::proofs {

void add_shape_proofs(std::vector<Proof>& out);
void add_divisor_proofs(std::vector<Proof>& out);
void add_range_proofs(std::vector<Proof>& out);
void add_mutant_proofs(std::vector<Proof>& out);
void add_xs3_proofs(std::vector<Proof>& out);
void add_stablehlo_proofs(std::vector<Proof>& out);
void add_tosa_proofs(std::vector<Proof>& out);

}  // namespace poolspec::proofs
