import Foundation
import GGUF
import PureSwiftKernels
import SanadCore
import SanadFiles

/// Copies of a model's Q4_1 matrices in the paired layout (Q4_1Paired.swift), made at load time so that every
/// product skips most of the unpacking of ggml's layout. A copy has the size of the matrix in the file, and the
/// file's pages of each copied matrix are handed back (`MappedFile.release`), so resident memory holds one copy
/// (private to the process, where the mapping's pages are shared page cache). SmolLM2-135M Q4_1: 66 MiB in 45–50
/// ms on one thread, while another builds the tokenizer (PureSwiftSession). The engine option `repack-weights:
/// false` keeps every matrix in the mapping.
/// Owns the copies; the model keeps it as long as its matrices.
final class RepackedWeights: @unchecked Sendable {  // @unchecked: copies written once at load, read-only after
    private let file: GGUFFile
    private var buffers: [(UnsafeMutableRawPointer, Int)] = []

    /// Copies nothing when not `enabled` (`prepare` returns its matrix).
    private let enabled: Bool

    init(file: GGUFFile, enabled: Bool) {
        self.file = file
        self.enabled = enabled
    }

    deinit {
        for (buffer, bytes) in buffers { munmap(buffer, bytes) }
    }

    /// `w` in the paired layout when it is a Q4_1 matrix the layout fits; otherwise `w` unchanged.
    func prepare(_ w: WeightMatrix) throws -> WeightMatrix {
        guard enabled, w.canRepackQ4_1Paired else { return w }
        let bytes = w.rows * w.rowBytes
        #if os(Linux)
            let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE
        #else
            let flags = MAP_PRIVATE | MAP_ANON
        #endif
        guard let buffer = mmap(nil, bytes, PROT_READ | PROT_WRITE, flags, -1, 0), buffer != MAP_FAILED else {
            throw SanadError.engine("pure-swift: out of memory copying \(bytes) bytes of \(w.name) at load time")
        }
        buffers.append((buffer, bytes))
        let repacked = w.repackedQ4_1Paired(into: buffer)
        file.mapping.release(w.base, byteCount: bytes)
        return repacked
    }
}
