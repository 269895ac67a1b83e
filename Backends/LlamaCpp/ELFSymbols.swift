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

    /// The names in an image already in memory (`SharedLibraryFile.exportedNames`, with this type's problems).
    static func exportedNames(in file: UnsafeRawBufferPointer) throws -> Set<String> {
        do {
            return try SharedLibraryFile.exportedNames(in: file)
        } catch SharedLibraryFile.ELFProblem.malformed(let what) {
            throw Problem.malformed(what)
        } catch {
            throw Problem.notELF64LittleEndian
        }
    }
}
