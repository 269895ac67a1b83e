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
        } catch GGUFError.cannotOpen(_, let reason) {
            return reason
        } catch {
            return "empty, not a shared library"
        }
        return elfProblem(mapping.bytes)
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
