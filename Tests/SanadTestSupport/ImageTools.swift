import Foundation

/// Renders text lines to images for the OCR tests, with ImageMagick (scripts/setup installs it and the font).
public enum ImageTools {
    /// DejaVu Sans Mono (Debian's fonts-dejavu-core): a monospace font Tesseract reads MRZ text from reliably.
    public static let font = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"

    /// The first `convert` on PATH that is ImageMagick (`convert -version` says `Version: ImageMagick`), or nil;
    /// nil too when the font is missing.
    public static func imageMagick() -> String? {
        guard FileManager.default.fileExists(atPath: font) else { return nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/convert" }.first { candidate in
            guard FileManager.default.isExecutableFile(atPath: candidate) else { return false }
            guard let r = try? runChildProcess(URL(fileURLWithPath: candidate), ["-version"]) else { return false }
            return String(decoding: r.stdout, as: UTF8.self).hasPrefix("Version: ImageMagick")
        }
    }

    /// Renders two lines (a TD3 or MRV-A zone) black on white at 300 dpi into a PNG at `output`.
    public static func renderLines(_ lines: [String], to output: String, convert: String) throws {
        var arguments = [
            "-density", "300", "-units", "PixelsPerInch", "-size", "1800x\(130 * lines.count)", "xc:white", "-font",
            font, "-pointsize", "14", "-fill", "black",
        ]
        for (i, line) in lines.enumerated() { arguments += ["-annotate", "+30+\(90 + 100 * i)", line] }
        let r = try runChildProcess(URL(fileURLWithPath: convert), arguments + [output])
        guard r.status == 0 else {
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "convert failed rendering \(output): \(String(decoding: r.stderr, as: UTF8.self))"
                ])
        }
    }
}
