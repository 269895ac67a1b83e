import Foundation
import SanadChat
import SanadCommandLine
import SanadCore
import SanadHost

/// `sanad tokenize`: the token ids of a text, as the model's own tokenizer (read from the GGUF file) makes them.
enum TokenizeCommand: SanadCommand {
    static let name = "tokenize"
    static let summary = "Print the token ids of a text as a JSON array"
    static let help = """
        Usage: sanad tokenize [-m MODEL] [--backend ID] [--no-bos] [--parse-special] [-f FILE | TEXT]

        Tokenizes TEXT (or the contents of FILE, or standard input with '-') with the model's tokenizer as the
        engine (the tier's, or --backend) loads it, and prints the ids as a JSON array on one line. BOS (and EOS)
        are added as the model's metadata says unless --no-bos is given. The model is opened like every other
        command's (engine by config, memory check), with a small context.

        Options:
          -m, --model MODEL   a .gguf path, or a file name in the models folder (default: the tier's model)
          --backend ID        engine whose tokenizer to use (default: the first available of the tier's list)
          --no-bos            do not add the model's special tokens (BOS/EOS)
          --parse-special     turn special-token text such as <|im_start|> into its token
          -f, --file FILE     read the text from FILE ('-' = standard input)
        \(LoadFlags.help)
        \(HostContext.optionsHelp)
        """

    static func run(_ arguments: inout Arguments) async throws -> Int32 {
        let noBOS = arguments.flag("--no-bos")
        let parseSpecial = arguments.flag("--parse-special")
        let modelName = try arguments.option("-m", "--model")
        let backendID = try arguments.option("--backend")
        let file = try arguments.option("-f", "--file")
        let load = try LoadFlags.parse(&arguments)
        let host = try HostContext.load(&arguments)
        let text = try promptText(positionals: try arguments.positionals(max: 1, names: "TEXT"), file: file)
        // Tokenizing needs no KV cache to speak of: the smallest context the engines accept.
        let (session, _) = try await host.openModel(
            ModelRequest(
                model: modelName, backend: backendID, contextLength: tokenizeContext, batchSize: tokenizeContext,
                checkMemory: load.checkMemory, allowLongContext: load.allowLongContext,
                cacheTypeK: load.cacheTypeK, cacheTypeV: load.cacheTypeV))
        let ids = try session.tokenize(text, addSpecial: !noBOS, parseSpecial: parseSpecial)
        print("[" + ids.map(String.init).joined(separator: ", ") + "]")
        return ExitCode.success
    }

    /// The context `tokenize` loads a model with.
    static let tokenizeContext = 16
}
