import Foundation

/// Where tests find the checkout, the models folder and fixtures.
public enum TestPaths {
    /// The package root (found from this source file's location).
    public static let packageRoot: URL = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    /// `SANAD_MODELS` or `models/` in the checkout.
    public static var modelsDirectory: URL {
        if let env = ProcessInfo.processInfo.environment["SANAD_MODELS"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        return packageRoot.appendingPathComponent("models")
    }

    /// A model file in the models folder, or nil when it is absent (tests that need it are then skipped).
    public static func model(_ name: String) -> URL? {
        let url = modelsDirectory.appendingPathComponent(name)
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    public static let smolLM2 = "SmolLM2-135M-Instruct.Q4_1.gguf"
    public static let gemma3 = "gemma-3-270m-q4_k_m.gguf"

    /// `Tests/Fixtures/<name>`.
    public static func fixture(_ name: String) -> URL {
        packageRoot.appendingPathComponent("Tests/Fixtures").appendingPathComponent(name)
    }

    /// A fresh temporary directory.
    public static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sanad-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
