/// The checks on a user-named native library (`SANAD_LIBLLAMA`, `SANAD_BLAS`, an engine's `library` option) before
/// it is handed to `dlopen`.
///
/// The system loader trusts the file: `dlopen` of a FIFO blocks for ever, and an ELF file cut short (a partial copy)
/// kills the process with SIGBUS when the loader touches a segment its program headers place beyond the end. So the
/// file must be a regular file (`RegularFile`) and, when it is a 64-bit little-endian ELF file, every loadable
/// segment and the program header table itself must lie inside it. Other formats are left to `dlopen`, which
/// refuses them with its own message.
public enum SharedLibraryFile {
    /// Nil when `path` may be handed to `dlopen`, else why not (worded for a message: "not a regular file (a
    /// FIFO)", "cut short or malformed: loadable segment 2 needs bytes up to offset 1048576 but the file has
    /// 4096 — …").
    public static func problem(path: String) -> String? {
        let mapping: MappedFile
        do {
            mapping = try MappedFile(path: path)
        } catch MappedFileError.cannotOpen(_, let reason) {
            return reason
        } catch {
            return "empty, not a shared library"
        }
        if let problem = elfProblem(mapping.bytes) { return problem }
        // The loader reads the dynamic symbols through the same bytes the .dynsym section describes: a symbol whose
        // name lies outside the string table crashes it. Without a readable section table (a stripped file) there is
        // nothing to check here.
        do {
            _ = try exportedNames(in: mapping.bytes)
        } catch ELFProblem.malformed(let what) where what != ELFProblem.noSectionTable {
            return "a malformed ELF file (\(what))"
        } catch {}
        return nil
    }

    /// Why an ELF image's symbols could not be read.
    public enum ELFProblem: Error, Equatable, CustomStringConvertible {
        case notELF64LittleEndian
        case malformed(String)

        /// The `malformed` text for a file whose section header table is absent or outside the file.
        public static let noSectionTable = "no section header table inside the file"

        public var description: String {
            switch self {
            case .notELF64LittleEndian: return "is not a 64-bit little-endian ELF shared object"
            case .malformed(let what): return "is a malformed ELF file (\(what))"
            }
        }
    }

    /// Defined function and object names in the dynamic symbol table (`.dynsym`) of a 64-bit little-endian ELF
    /// image, read without loading it. Every offset and size is compared with the file's length without forming a
    /// sum that could overflow; a symbol whose name lies outside `.dynstr` is malformed.
    public static func exportedNames(in file: UnsafeRawBufferPointer) throws -> Set<String> {
        // e_ident: 0x7F 'E' 'L' 'F', class 2 (64-bit), data 1 (little-endian).
        guard file.count >= 64, file[0] == 0x7F, file[1] == 0x45, file[2] == 0x4C, file[3] == 0x46, file[4] == 2,
            file[5] == 1
        else { throw ELFProblem.notELF64LittleEndian }
        /// Whether `count` bytes at `offset` lie inside the file.
        func inside(_ offset: Int, _ count: Int) -> Bool {
            offset >= 0 && count >= 0 && offset <= file.count && count <= file.count - offset
        }
        func u16(_ o: Int) throws -> Int {
            guard inside(o, 2) else { throw ELFProblem.malformed("offset \(o) past the end") }
            return Int(UInt16(littleEndian: file.loadUnaligned(fromByteOffset: o, as: UInt16.self)))
        }
        func u32(_ o: Int) throws -> Int {
            guard inside(o, 4) else { throw ELFProblem.malformed("offset \(o) past the end") }
            return Int(UInt32(littleEndian: file.loadUnaligned(fromByteOffset: o, as: UInt32.self)))
        }
        func u64(_ o: Int) throws -> Int {
            guard inside(o, 8) else { throw ELFProblem.malformed("offset \(o) past the end") }
            let v = UInt64(littleEndian: file.loadUnaligned(fromByteOffset: o, as: UInt64.self))
            guard v <= UInt64(Int.max) else { throw ELFProblem.malformed("value \(v) out of range") }
            return Int(v)
        }
        let sectionTable = (try? u64(0x28)) ?? 0  // e_shoff
        let sectionSize = try u16(0x3A)  // e_shentsize
        let sectionCount = try u16(0x3C)  // e_shnum
        // e_shentsize and e_shnum are 16-bit: their product cannot overflow.
        guard sectionTable > 0, sectionSize >= 64, sectionCount > 0, inside(sectionTable, sectionSize * sectionCount)
        else { throw ELFProblem.malformed(ELFProblem.noSectionTable) }
        func section(_ i: Int) throws -> (type: Int, link: Int, offset: Int, size: Int, entrySize: Int) {
            let s = sectionTable + i * sectionSize
            return (try u32(s + 4), try u32(s + 40), try u64(s + 24), try u64(s + 32), try u64(s + 56))
        }
        var names = Set<String>()
        for i in 0..<sectionCount {
            let symbols = try section(i)
            guard symbols.type == 11 else { continue }  // SHT_DYNSYM
            guard symbols.link < sectionCount, symbols.entrySize >= 24, inside(symbols.offset, symbols.size)
            else { throw ELFProblem.malformed(".dynsym lies outside the file") }
            let strings = try section(symbols.link)
            guard inside(strings.offset, strings.size) else {
                throw ELFProblem.malformed(".dynstr lies outside the file")
            }
            for k in 0..<(symbols.size / symbols.entrySize) {
                let sym = symbols.offset + k * symbols.entrySize
                let nameOffset = try u32(sym)
                let info = file[sym + 4]
                let sectionIndex = try u16(sym + 6)
                guard nameOffset < max(strings.size, 1) else {
                    throw ELFProblem.malformed("the name of dynamic symbol \(k) lies outside .dynstr")
                }
                let kind = info & 0xF  // STT_FUNC 2, STT_OBJECT 1
                let binding = info >> 4  // STB_GLOBAL 1, STB_WEAK 2
                guard sectionIndex != 0, kind == 1 || kind == 2, binding == 1 || binding == 2 else { continue }
                var end = strings.offset + nameOffset
                let limit = strings.offset + strings.size
                while end < limit && file[end] != 0 { end += 1 }
                let bytes = UnsafeRawBufferPointer(rebasing: file[(strings.offset + nameOffset)..<end])
                names.insert(String(decoding: bytes, as: UTF8.self))
            }
        }
        return names
    }

    /// Nil when `file` is not a 64-bit little-endian ELF image or when its program headers fit the file.
    public static func elfProblem(_ file: UnsafeRawBufferPointer) -> String? {
        guard file.count >= 4, file[0] == 0x7F, file[1] == 0x45, file[2] == 0x4C, file[3] == 0x46 else {
            return nil  // not ELF: dlopen says so itself
        }
        guard file.count >= 64 else { return "cut short: \(file.count) bytes, less than an ELF header" }
        guard file[4] == 2, file[5] == 1 else { return nil }  // ELF32 or big-endian: dlopen refuses the class
        func load<T: FixedWidthInteger>(_ offset: Int, _ type: T.Type) -> T {
            T(littleEndian: file.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let tableOffset = load(0x20, UInt64.self)  // e_phoff
        let entrySize = Int(load(0x36, UInt16.self))  // e_phentsize
        let count = Int(load(0x38, UInt16.self))  // e_phnum
        guard count > 0 else { return nil }
        // e_phentsize × e_phnum are 16-bit: the product cannot overflow.
        guard entrySize >= 56, tableOffset <= UInt64(file.count),
            UInt64(entrySize * count) <= UInt64(file.count) - tableOffset
        else {
            return "a malformed ELF file: its program header table (\(count) entries at offset \(tableOffset)) "
                + "lies outside the file's \(file.count) bytes"
        }
        for index in 0..<count {
            let entry = Int(tableOffset) + index * entrySize
            guard load(entry, UInt32.self) == 1 else { continue }  // PT_LOAD
            let offset = load(entry + 8, UInt64.self)  // p_offset
            let size = load(entry + 32, UInt64.self)  // p_filesz
            let (end, overflow) = offset.addingReportingOverflow(size)
            guard !overflow, end <= UInt64(file.count) else {
                return "cut short or malformed: loadable segment \(index) needs bytes up to offset "
                    + "\(overflow ? "beyond 2^64" : "\(end)") but the file has \(file.count) — copy the library again"
            }
        }
        return nil
    }
}

/// The names of the functions a 64-bit little-endian ELF shared object defines and exports, read from its
/// `.dynsym` section without loading it, with problems worded for a refusal.
///
/// The llama engine runs its ABI guard's symbol checks on the file *before* `dlopen`: a refused libllama, once
/// loaded, stays mapped (its C++ libraries are not unloadable) together with its `libggml*.so.0`, and a correct
/// libllama loaded afterwards would be bound to that libggml by soname. Checking first keeps a wrong build out of the
/// process.
public enum ELFSymbols {
    public enum Problem: Error, CustomStringConvertible {
        case unreadable(String)
        case notELF64LittleEndian
        case malformed(String)

        public var description: String {
            switch self {
            case .unreadable(let why): return "cannot be read (\(why))"
            case .notELF64LittleEndian: return "is not a 64-bit little-endian ELF shared object"
            case .malformed(let what): return "is a malformed ELF file (\(what))"
            }
        }
    }

    /// Defined function and object names in the dynamic symbol table of the file at `path`.
    public static func exportedNames(path: String) throws -> Set<String> {
        // MappedFile opens with O_NONBLOCK and refuses anything but a regular file (a FIFO never blocks).
        let mapping: MappedFile
        do {
            mapping = try MappedFile(path: path)
        } catch MappedFileError.cannotOpen(_, let reason) {
            throw Problem.unreadable(reason)
        } catch {
            throw Problem.notELF64LittleEndian  // empty
        }
        do {
            return try SharedLibraryFile.exportedNames(in: mapping.bytes)
        } catch SharedLibraryFile.ELFProblem.malformed(let what) {
            throw Problem.malformed(what)
        } catch {
            throw Problem.notELF64LittleEndian
        }
    }
}
