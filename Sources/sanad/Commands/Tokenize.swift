import Foundation
import GGUF
import PureSwiftBackend
import SanadCore

/// `sanad tokenize`: the token ids of a text, as the model's own tokenizer (read from the GGUF file) makes them.
enum TokenizeCommand: SanadCommand {
    static let name = "tokenize"
    static let summary = "Print the token ids of a text as a JSON array"
    static let help = """
        Usage: sanad tokenize [-m MODEL] [--no-bos] [--parse-special] [-f FILE | TEXT]

        Tokenizes TEXT (or the contents of FILE, or standard input with '-') with the model's tokenizer, exactly as
        llama.cpp does, and prints the ids as a JSON array on one line. BOS (and EOS) are added as the model's
        metadata says unless --no-bos is given.

        Options:
          -m, --model MODEL   a .gguf path, or a file name in the models folder (default: the tier's model)
          --no-bos            do not add the model's special tokens (BOS/EOS)
          --parse-special     turn special-token text such as <|im_start|> into its token
          -f, --file FILE     read the text from FILE ('-' = standard input)
        \(HostContext.optionsHelp)
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let noBOS = arguments.flag("--no-bos")
        let parseSpecial = arguments.flag("--parse-special")
        let modelName = try arguments.option("-m", "--model")
        let file = try arguments.option("-f", "--file")
        let host = try HostContext.load(&arguments)
        let text = try promptText(positionals: try arguments.positionals(max: 1, names: "TEXT"), file: file)
        let url = try host.resolveModel(modelName)
        let model = try GGUFFile(path: url.path)
        try ModelValidation.validate(model)  // as every engine does before reading the vocabulary
        let tokenizer = try Tokenizer.load(from: model)
        let ids = tokenizer.encode(text, addSpecial: !noBOS, parseSpecial: parseSpecial)
        print("[" + ids.map(String.init).joined(separator: ", ") + "]")
        return ExitCode.success
    }
}

/// The text a command works on: the positional argument, standard input for '-', or the file given with -f (from a
/// file or standard input one trailing newline is dropped when `dropTrailingNewline`, as llama.cpp's tools do).
func promptText(positionals: [String], file: String?, dropTrailingNewline: Bool = false) throws -> String {
    if let file {
        guard positionals.isEmpty else { throw UsageError("give the text either with -f or as an argument, not both") }
        var text = try readText(file)
        if dropTrailingNewline && text.hasSuffix("\n") { text.removeLast() }
        return text
    }
    guard let first = positionals.first else { throw UsageError("missing the text (an argument, -f FILE, or '-')") }
    guard first == "-" else { return first }
    var text = try readText("-")
    if dropTrailingNewline && text.hasSuffix("\n") { text.removeLast() }
    return text
}

/// Reads a UTF-8 text file, or standard input for '-'.
func readText(_ path: String) throws -> String {
    let data: Data
    if path == "-" {
        data = FileHandle.standardInput.readDataToEndOfFile()
    } else {
        guard let d = FileManager.default.contents(atPath: path) else {
            throw SanadError.engine("cannot read '\(path)': no such file or not readable")
        }
        data = d
    }
    return String(decoding: data, as: UTF8.self)
}
