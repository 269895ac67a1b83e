import Foundation
import GGUF

/// The names of the functions a 64-bit little-endian ELF shared object defines and exports, read from its
/// `.dynsym` section without loading it.
///
/// `LlamaLibrary` runs the symbol checks of `LlamaABIGuard` on the file *before* `dlopen`: a refused libllama,
/// once loaded, stays mapped (its C++ libraries are not unloadable) together with its `libggml*.so.0`, and a
/// correct libllama loaded afterwards would be bound to that libggml by soname. Checking first keeps a wrong build
/// out of the process.
enum ELFSymbols {
    enum Problem: Error, CustomStringConvertible {
        case unreadable(String)
        case notELF64LittleEndian
        case malformed(String)

        var description: String {
            switch self {
            case .unreadable(let why): return "cannot be read (\(why))"
            case .notELF64LittleEndian: return "is not a 64-bit little-endian ELF shared object"
            case .malformed(let what): return "is a malformed ELF file (\(what))"
            }
        }
    }

    /// Defined function and object names in the dynamic symbol table of the file at `path`.
    static func exportedNames(path: String) throws -> Set<String> {
        // MappedFile opens with O_NONBLOCK and refuses anything but a regular file (a FIFO never blocks).
        let mapping: MappedFile
        do {
            mapping = try MappedFile(path: path)
        } catch GGUFError.cannotOpen(_, let reason) {
            throw Problem.unreadable(reason)
        } catch {
            throw Problem.notELF64LittleEndian  // empty
        }
        return try exportedNames(in: mapping.bytes)
    }

    static func exportedNames(in file: UnsafeRawBufferPointer) throws -> Set<String> {
        // e_ident: 0x7F 'E' 'L' 'F', class 2 (64-bit), data 1 (little-endian).
        guard file.count >= 64, file[0] == 0x7F, file[1] == 0x45, file[2] == 0x4C, file[3] == 0x46, file[4] == 2,
            file[5] == 1
        else { throw Problem.notELF64LittleEndian }
        func u16(_ o: Int) throws -> Int {
            guard o >= 0, o + 2 <= file.count else { throw Problem.malformed("offset \(o) past the end") }
            return Int(UInt16(littleEndian: file.loadUnaligned(fromByteOffset: o, as: UInt16.self)))
        }
        func u32(_ o: Int) throws -> Int {
            guard o >= 0, o + 4 <= file.count else { throw Problem.malformed("offset \(o) past the end") }
            return Int(UInt32(littleEndian: file.loadUnaligned(fromByteOffset: o, as: UInt32.self)))
        }
        func u64(_ o: Int) throws -> Int {
            guard o >= 0, o + 8 <= file.count else { throw Problem.malformed("offset \(o) past the end") }
            let v = UInt64(littleEndian: file.loadUnaligned(fromByteOffset: o, as: UInt64.self))
            guard v <= UInt64(Int.max) else { throw Problem.malformed("value \(v) out of range") }
            return Int(v)
        }
        /// Whether `count` bytes at `offset` lie inside the file (no sum is formed that could overflow).
        func inside(_ offset: Int, _ count: Int) -> Bool {
            offset >= 0 && count >= 0 && offset <= file.count && count <= file.count - offset
        }
        let sectionTable = try u64(0x28)  // e_shoff
        let sectionSize = try u16(0x3A)  // e_shentsize
        let sectionCount = try u16(0x3C)  // e_shnum
        // e_shentsize and e_shnum are 16-bit: their product cannot overflow.
        guard sectionTable > 0, sectionSize >= 64, sectionCount > 0, inside(sectionTable, sectionSize * sectionCount)
        else { throw Problem.malformed("no section header table inside the file") }
        func section(_ i: Int) throws -> (type: Int, link: Int, offset: Int, size: Int, entrySize: Int) {
            let s = sectionTable + i * sectionSize
            return (try u32(s + 4), try u32(s + 40), try u64(s + 24), try u64(s + 32), try u64(s + 56))
        }
        var names = Set<String>()
        for i in 0..<sectionCount {
            let symbols = try section(i)
            guard symbols.type == 11 else { continue }  // SHT_DYNSYM
            guard symbols.link < sectionCount, symbols.entrySize >= 24, inside(symbols.offset, symbols.size)
            else { throw Problem.malformed(".dynsym lies outside the file") }
            let strings = try section(symbols.link)
            guard inside(strings.offset, strings.size) else { throw Problem.malformed(".dynstr lies outside the file") }
            for k in 0..<(symbols.size / symbols.entrySize) {
                let sym = symbols.offset + k * symbols.entrySize
                let nameOffset = try u32(sym)
                let info = file[sym + 4]
                let sectionIndex = try u16(sym + 6)
                let kind = info & 0xF  // STT_FUNC 2, STT_OBJECT 1
                let binding = info >> 4  // STB_GLOBAL 1, STB_WEAK 2
                guard sectionIndex != 0, kind == 1 || kind == 2, binding == 1 || binding == 2,
                    nameOffset < strings.size
                else { continue }
                var end = strings.offset + nameOffset
                let limit = strings.offset + strings.size
                while end < limit && file[end] != 0 { end += 1 }
                let bytes = UnsafeRawBufferPointer(rebasing: file[(strings.offset + nameOffset)..<end])
                names.insert(String(decoding: bytes, as: UTF8.self))
            }
        }
        return names
    }
}
