// The lift of tile_copy.cu, as a bundled lift-cache entry.
#G = #cuir.mem<global>
#S = #cuir.mem<shared>
cuir.kernel @copy_tile(%src: memref<?xf32, #G>, %dst: memref<?xf32, #G>,
                       %n: index)
    grid (d0) -> (d0 ceildiv 64) threads 64 arch "sm_80" {
  %c64 = arith.constant 64 : index loc("tile_copy.cu":4:40 to 4:42)
  %bx = cuir.block_id x loc("tile_copy.cu":4:27 to 4:37)
  %base = arith.muli %bx, %c64 : index loc("tile_copy.cu":4:27 to 4:42)
  %tile = cuir.alloc : memref<64xf32, #S> loc("tile"("tile_copy.cu":3:3 to 3:29))
  cuir.copy %src[%base] -> %tile : memref<?xf32, #G> -> memref<64xf32, #S>
      loc("tile"("tile_copy.cu":4:3 to 4:58))
  cuir.barrier.sync loc("tile_copy.cu":5:3 to 5:19)
  cuir.copy %tile -> %dst[%base] : memref<64xf32, #S> -> memref<?xf32, #G>
      loc("dst"("tile_copy.cu":6:3 to 6:58))
  cuir.return loc("tile_copy.cu":7:1 to 7:2)
} loc("copy_tile"("tile_copy.cu":2:1 to 7:2))
