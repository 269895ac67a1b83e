import Foundation
import GGUF
import LlamaCppBackend
import SanadCore
import SanadTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A copy of another shared object with one 64-bit field of its ELF header or of its .dynsym section header set.
func hostileELF(_ source: String, field: String, value: UInt64) throws -> URL {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
    func u64(_ o: Int) -> Int { Int(bytes[o..<o + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) }
    func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
    func put(_ v: UInt64, at o: Int) { for i in 0..<8 { bytes[o + i] = UInt8(truncatingIfNeeded: v >> (8 * i)) } }
    let table = u64(0x28)
    let size = u16(0x3A)
    let dynsym = (0..<u16(0x3C)).map { table + $0 * size }.first { bytes[$0 + 4] == 11 } ?? table
    switch field {
    case "e_shoff": put(value, at: 0x28)
    case "dynsym.sh_offset": put(value, at: dynsym + 24)
    case "dynsym.sh_size": put(value, at: dynsym + 32)
    default: put(value, at: dynsym + 56)  // dynsym.sh_entsize
    }
    let url = try TestPaths.temporaryDirectory().appendingPathComponent("libhostile.so")
    try Data(bytes).write(to: url)
    return url
}

@Suite("llama backend: hostile files")
struct LlamaHostileFileTests {
    static let cases: [(String, UInt64)] = [
        ("e_shoff", UInt64(Int.max)), ("e_shoff", 1 << 63), ("dynsym.sh_offset", UInt64(Int.max) - 8),
        ("dynsym.sh_size", UInt64(Int.max)), ("dynsym.sh_entsize", 0), ("dynsym.sh_entsize", UInt64(Int.max)),
    ]

    @Test(
        "section header fields out of range never trap; the library is refused with its path",
        arguments: cases)
    func hostileSectionHeaders(field: String, value: UInt64) throws {
        let source = try #require(otherSharedObjects.first, "no system shared object to copy")
        let url = try hostileELF(source, field: field, value: value)
        guard case .unavailable(let reason) = LlamaCppBackend(library: url.path).availability else {
            Issue.record("a hostile ELF file was accepted as libllama")
            return
        }
        #expect(reason.contains("libhostile.so"), "\(reason)")
    }

    @Test("a FIFO named as libllama is refused at once")
    func fifoLibrary() throws {
        let path = try TestPaths.temporaryDirectory().appendingPathComponent("libllama.so").path
        try #require(mkfifo(path, 0o600) == 0)
        guard case .unavailable(let reason) = LlamaCppBackend(library: path).availability else {
            Issue.record("a FIFO was accepted as libllama")
            return
        }
        #expect(reason.contains("not a regular file (a FIFO)"), "\(reason)")
    }

    @Test("the llama engine validates a model before libllama sees it")
    func validatesBeforeLoading() async throws {
        let backend = LlamaCppBackend()
        guard case .available = backend.availability else { return }  // no libllama here: nothing to check
        var w = PlausibleModel.writer()
        w.set("llama.attention.layer_norm_rms_epsilon", .float32(-1))
        let url = try TestPaths.temporaryDirectory().appendingPathComponent("negative-eps.gguf")
        try w.write(to: url)
        do {
            _ = try await backend.loadModel(at: url, options: ModelLoadOptions(contextLength: 64))
            Issue.record("a negative epsilon was handed to libllama")
        } catch {
            #expect("\(error)".contains("llama.attention.layer_norm_rms_epsilon -1.0 in '\(url.path)'"), "\(error)")
        }
    }
}
