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
    /// One region for every copy, reserved at the first and filled in order: on Linux in 2 MiB pages
    /// (`MADV_HUGEPAGE`), so the 66 MiB of SmolLM2's copies take 33 page faults instead of 17,000, and its products
    /// fewer TLB misses. Copies that do not fit (never, as it is reserved at the file's size) get their own mapping.
    private var region: (base: UnsafeMutableRawPointer, mapped: UnsafeMutableRawPointer, bytes: Int)?
    private var used = 0
    private var buffers: [(UnsafeMutableRawPointer, Int)] = []

    /// Copies nothing when not `enabled` (`prepare` returns its matrix).
    private let enabled: Bool

    init(file: GGUFFile, enabled: Bool) {
        self.file = file
        self.enabled = enabled
    }

    deinit {
        if let region { munmap(region.mapped, region.bytes) }
        for (buffer, bytes) in buffers { munmap(buffer, bytes) }
    }

    /// `w` in the paired layout when it is a Q4_1 matrix the layout fits; otherwise `w` unchanged.
    func prepare(_ w: WeightMatrix) throws -> WeightMatrix {
        guard enabled, w.canRepackQ4_1Paired else { return w }
        let bytes = w.rows * w.rowBytes
        let buffer = try space(bytes, for: w.name)
        let repacked = w.repackedQ4_1Paired(into: buffer)
        file.mapping.release(w.base, byteCount: bytes)
        return repacked
    }

    /// `bytes` of writable memory for the copy of `name`: the next 64-byte-aligned piece of the region, or a
    /// mapping of its own.
    private func space(_ bytes: Int, for name: String) throws -> UnsafeMutableRawPointer {
        let hugePage = 2 << 20
        if region == nil {
            // Address space only (MAP_NORESERVE): pages exist once written, so the unused tail costs nothing.
            let reserve = (file.tensorBytes + hugePage - 1) / hugePage * hugePage + hugePage
            #if os(Linux)
                let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
            #else
                let flags = MAP_PRIVATE | MAP_ANON
            #endif
            if let mapped = mmap(nil, reserve, PROT_READ | PROT_WRITE, flags, -1, 0), mapped != MAP_FAILED {
                let aligned = (Int(bitPattern: mapped) + hugePage - 1) / hugePage * hugePage
                let base = UnsafeMutableRawPointer(bitPattern: aligned)!
                #if os(Linux)
                    _ = madvise(base, reserve - (aligned - Int(bitPattern: mapped)), 14)  // MADV_HUGEPAGE
                #endif
                region = (base, mapped, reserve)
            }
        }
        if let region, used + bytes <= region.bytes - hugePage {
            defer { used = (used + bytes + 63) / 64 * 64 }
            return region.base + used
        }
        #if os(Linux)
            let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE
        #else
            let flags = MAP_PRIVATE | MAP_ANON
        #endif
        guard let buffer = mmap(nil, bytes, PROT_READ | PROT_WRITE, flags, -1, 0), buffer != MAP_FAILED else {
            throw SanadError.engine("pure-swift: out of memory copying \(bytes) bytes of \(name) at load time")
        }
        buffers.append((buffer, bytes))
        return buffer
    }
}
