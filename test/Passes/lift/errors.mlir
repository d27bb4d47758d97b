// RUN: cuir-opt %s --lift -split-input-file -verify-diagnostics
//
// --lift starts from a CUDA source: a module without one, or one that already
// has a body, is an error.

// expected-error @below {{--lift needs the module that cuir-opt makes of a CUDA source (a .cu input): the attributes 'cuir.source_path' and 'cuir.source_text' are missing}}
module {
}

// -----

// expected-error @below {{--lift replaces the body of a module made of a CUDA source, but this module already has ops}}
module attributes {cuir.source_path = "k.cu", cuir.source_text = "__global__ void k() {}\0A"} {
  cuir.kernel @k(%n: index) grid (d0) -> (d0) threads 32 arch "sm_80" {
  }
}
