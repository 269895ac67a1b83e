/// RMS normalization as ggml computes it: the mean of squares summed in double, `scale = 1/√(mean + ε)` in float,
/// then `out[i] = (x[i] · scale) · weight[i]` (no weight multiply when `weight` is nil). `out` may be `x`.
@inline(__always)
@inlinable
public func rmsNorm(
    _ x: UnsafePointer<Float>, weight: UnsafePointer<Float>?, out: UnsafeMutablePointer<Float>, count: Int,
    epsilon: Float
) {
    var sum: Double = 0
    for i in 0..<count { sum += Double(x[i] * x[i]) }
    let mean = Float(sum / Double(count))
    let scale = 1 / (mean + epsilon).squareRoot()
    if let weight {
        for i in 0..<count { out[i] = (x[i] * scale) * weight[i] }
    } else {
        for i in 0..<count { out[i] = x[i] * scale }
    }
}
