//! A PNG bomb: a small file whose iCCP chunk inflates to 512 MiB. Reading it (as a
//! heightmap, and `orogen info`'s probe) must not allocate anywhere near that; the
//! decoder runs with limits sized from the image's header (hardening issue #11).
//! This binary counts its own allocations to check the peak.

use std::io::Write;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = flate2::Crc::new();
    crc.update(&out[start..]);
    out.extend_from_slice(&crc.sum().to_be_bytes());
}

fn zlib(parts: impl Iterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    for p in parts {
        z.write_all(&p).unwrap();
    }
    z.finish().unwrap()
}

#[test]
fn a_png_bomb_is_read_without_inflating_it() {
    let mib = vec![0u8; 1 << 20];
    let mut iccp = b"bomb\0\0".to_vec();
    iccp.extend(zlib((0..512).map(|_| mib.clone())));
    drop(mib);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    // A 2x2 8-bit grayscale image.
    chunk(&mut png, b"IHDR", &[0, 0, 0, 2, 0, 0, 0, 2, 8, 0, 0, 0, 0]);
    chunk(&mut png, b"iCCP", &iccp);
    chunk(
        &mut png,
        b"IDAT",
        &zlib([vec![0, 10, 20, 0, 30, 40]].into_iter()),
    );
    chunk(&mut png, b"IEND", &[]);
    drop(iccp);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.png");
    std::fs::write(&path, &png).unwrap();
    println!("bomb: {} bytes on disk", png.len());
    drop(png);

    let base = counting_alloc::start();
    let map = orogen_core::io::read_gray_image(&path);
    let info = orogen_core::io::probe(&path, None);
    let peak = counting_alloc::peak_since(base);
    println!(
        "peak while reading: {:.1} MiB",
        peak as f64 / (1 << 20) as f64
    );
    // Either outcome is fine (the pixels are intact, so today it decodes); what matters
    // is that the 512 MiB never got allocated.
    if let Ok(m) = &map {
        assert_eq!((m.width(), m.height()), (2, 2));
        assert!((m.data[3] - 40.0 / 255.0).abs() < 1e-6);
    }
    if let Err(e) = &info {
        assert!(e.to_string().contains("bomb.png"), "{e}");
    }
    assert!(peak < 128 << 20, "reading allocated {peak} bytes");
}
