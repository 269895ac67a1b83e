import Foundation
import SanadNative

/// The blas engine's probe (`sanad-probe blas LIBRARY`, see `NativeProbe`): in a child process, load the CBLAS
/// library and run products of the shapes a prompt batch gives `cblas_sgemm` (so its widest kernels and its threads
/// run), each compared with a plain loop.
public enum BLASProbe {
    /// Runs the probe in this (child) process; the exit status `sanad-probe` returns. Prints `ok …` on success.
    public static func run(library: String) -> Int32 {
        let lib: BLASLibrary
        switch BLASLibrary.resolve(option: library, probe: false) {
        case .success(let l): lib = l
        case .failure(let error):
            FileHandle.standardError.write(Data("probe: \(error.reason)\n".utf8))
            return 3
        }
        guard lib.passesSmokeTest() else {
            FileHandle.standardError.write(Data("probe: cblas_sgemm computed a wrong 2×3 · 3×2 product\n".utf8))
            return 4
        }
        let threads = max(1, min(4, ProcessInfo.processInfo.activeProcessorCount))
        // rows × inner · (columns × inner)ᵀ, as the engine multiplies activations by weight rows.
        let (rows, inner, columns) = (64, 256, 96)
        let a: [Float] = (0..<(rows * inner)).map { (i: Int) -> Float in Float((i * 7 + 3) % 17) / 16 - 0.5 }
        let b: [Float] = (0..<(columns * inner)).map { (i: Int) -> Float in Float((i * 5 + 1) % 13) / 12 - 0.5 }
        for count in [1, threads] {
            lib.useThreads(count)
            var c = [Float](repeating: .nan, count: rows * columns)
            a.withUnsafeBufferPointer { a in
                b.withUnsafeBufferPointer { b in
                    c.withUnsafeMutableBufferPointer { c in
                        lib.sgemm(
                            CBLAS.rowMajor, CBLAS.noTranspose, CBLAS.transpose, Int32(rows), Int32(columns),
                            Int32(inner), 1, a.baseAddress, Int32(inner), b.baseAddress, Int32(inner), 0, c.baseAddress,
                            Int32(columns))
                    }
                }
            }
            for i in 0..<rows {
                for j in 0..<columns {
                    var sum: Float = 0
                    for k in 0..<inner { sum += a[i * inner + k] * b[j * inner + k] }
                    guard abs(c[i * columns + j] - sum) <= 1e-3 * max(1, abs(sum)) else {
                        FileHandle.standardError.write(
                            Data(
                                "probe: cblas_sgemm on \(count) threads gave \(c[i * columns + j]) at (\(i), \(j)), expected \(sum)\n"
                                    .utf8))
                        return 4
                    }
                }
            }
        }
        NativeProbe.reportLoadedFiles()
        print("ok computed \(rows)×\(inner) · (\(columns)×\(inner))ᵀ products on 1 and \(threads) threads, checked")
        return 0
    }
}
