//! Hardening issue #11, "outputs are all new or all old": the reproducers of a bake that
//! fails or dies part-way. Each run is the real `orogen` binary; after it, the output
//! folder must hold exactly the earlier bake or exactly the new one, and the next bake
//! must clean up whatever the dead run left beside it.

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use common::{files_of as names, orogen, stderr, OROGEN as ORO};

/// Every file of a bake folder by name, except `bake.json`'s timings: its `seed` line
/// stands for it (the timings differ from run to run).
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    names(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            if n == "bake.json" {
                let text = String::from_utf8(bytes).unwrap();
                let seed = text
                    .lines()
                    .find(|l| l.trim_start().starts_with("\"seed\""))
                    .unwrap_or("no seed")
                    .trim()
                    .to_string();
                (n, seed.into_bytes())
            } else {
                (n, bytes)
            }
        })
        .collect()
}

fn bake_args<'a>(out: &'a str, seed: &'a str) -> Vec<&'a str> {
    vec![
        "bake",
        "--out",
        out,
        "--set",
        "size=(129,129)",
        "--set",
        seed,
    ]
}

/// Starts a bake and returns it once its last stage is done (its progress line
/// `[N/N] NAME done`), so only the writing is left.
fn start_and_wait_for_writing(dir: &Path, args: &[&str]) -> std::process::Child {
    use std::io::BufRead;
    let mut child = Command::new(ORO)
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        let Some(Ok(line)) = lines.next() else {
            let status = child.wait().unwrap();
            panic!("the bake ended ({status:?}) before its last stage was done");
        };
        let last = line
            .strip_prefix('[')
            .and_then(|l| l.split_once(']'))
            .and_then(|(n, _)| n.split_once('/'))
            .is_some_and(|(i, n)| i == n);
        if last && line.contains(" done") {
            return child;
        }
    }
}

#[test]
fn a_bake_killed_at_any_moment_leaves_the_old_maps_or_the_new_ones() {
    // Reproducer: SIGKILL (or a second Ctrl-C) while the files were renamed into place
    // one by one left a mix of old and new maps and `.NAME.tmp-PID-N` files.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (out, seed) in [("a", "seed=1"), ("b", "seed=2"), ("out", "seed=1")] {
        let o = orogen(d, &bake_args(out, seed));
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let (a, b) = (contents(&d.join("a")), contents(&d.join("b")));
    assert_ne!(a, b);
    // How long writing and replacing a folder takes (the same bake again into `b`).
    let mut child = start_and_wait_for_writing(d, &bake_args("b", "seed=2"));
    let t0 = Instant::now();
    assert!(child.wait().unwrap().success());
    let writing = t0.elapsed();
    assert_eq!(contents(&d.join("b")), b);

    // Kill moments spread over the writing and a little past it, from a fixed sequence.
    // The writing's length varies with the machine's load, so the spread follows what the
    // kills find: wider after one that landed before the swap, narrower after one that
    // landed past it.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut scale = 1.2;
    let mut outcomes = BTreeMap::<&str, usize>::new();
    // `out` holds the seed-1 bake; each run bakes the other one.
    let mut holds_a = true;
    for _ in 0..20 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let at = writing.mul_f64((state % 1000) as f64 / 1000.0 * scale);
        let (seed, old, new) = if holds_a {
            ("seed=2", &a, &b)
        } else {
            ("seed=1", &b, &a)
        };
        let mut child = start_and_wait_for_writing(d, &bake_args("out", seed));
        std::thread::sleep(at);
        let _ = child.kill(); // SIGKILL; the run may have finished already
        let status = child.wait().unwrap();
        let now = contents(&d.join("out"));
        let which = if now == *old {
            scale *= 1.3;
            "killed before the swap"
        } else if now == *new {
            scale *= 0.8;
            holds_a = !holds_a;
            "finished or killed after the swap"
        } else {
            panic!(
                "killed {at:?} into writing (exit {status:?}): the folder is neither bake: {:?}",
                now.keys().collect::<Vec<_>>()
            )
        };
        *outcomes.entry(which).or_default() += 1;
    }
    // Both outcomes occurred, so the kills landed on both sides of the swap.
    assert_eq!(outcomes.len(), 2, "writing takes {writing:?}: {outcomes:?}");

    // The next bake clears what the killed runs left beside the folder.
    let o = orogen(d, &bake_args("out", "seed=2"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(contents(&d.join("out")), b);
    assert_eq!(names(d), ["a", "b", "out"]);
}

/// Runs `orogen` with writes limited to `max_bytes` per file (`RLIMIT_FSIZE`): a write
/// past it fails with `EFBIG`, as on a full disk, without needing a small file system.
fn orogen_with_file_limit(dir: &Path, args: &[&str], max_bytes: u64) -> Output {
    let mut cmd = Command::new(ORO);
    cmd.current_dir(dir).args(args);
    // SAFETY: between fork and exec only async-signal-safe calls (signal, setrlimit).
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: max_bytes,
                rlim_max: max_bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().expect("the orogen binary runs")
}

#[test]
fn a_write_that_fails_part_way_replaces_nothing() {
    // Reproducer: a disk that fills up at `bake.json`, after every map was written, left
    // new maps beside the old `bake.json` (whose height range scales height.png).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = orogen(d, &["bake", "--out", "out", "--set", "size=(65,65)"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = contents(&d.join("out"));
    let largest_map = names(&d.join("out"))
        .iter()
        .filter(|n| *n != "bake.json")
        .map(|n| std::fs::metadata(d.join("out").join(n)).unwrap().len())
        .max()
        .unwrap();

    // 600 thermal stages: a bake.json far larger than any map of a 65² grid.
    let stages = format!("stages=[{}]", vec!["Thermal(iterations: 1)"; 600].join(","));
    let args = [
        "bake",
        "--out",
        "out",
        "--set",
        "size=(65,65)",
        "--set",
        "seed=7",
        "--set",
        &stages,
    ];
    for (limit, fails_at) in [
        (largest_map + 1024, "`out/bake.json`: File too large"),
        (4096, "`out/height.exr`: cannot encode EXR: File too large"),
    ] {
        let o = orogen_with_file_limit(d, &args, limit);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "limit {limit}: {err}");
        assert!(err.contains(fails_at), "limit {limit}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(contents(&d.join("out")), before, "limit {limit}: {err}");
        assert_eq!(names(d), ["out"], "limit {limit}: {err}");
    }
    // With room to write, the same bake replaces the folder.
    let o = orogen(d, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(contents(&d.join("out"))["bake.json"].ends_with(b"7,"));
}

#[test]
fn a_locked_map_of_the_earlier_bake_does_not_stop_the_new_one() {
    // Reproducer: `chattr +i d/rivers.png` made the next bake exit 1 with seven maps new
    // and three old. The folder is now swapped whole, so the locked file goes with the
    // earlier bake and the new one is complete.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = orogen(d, &bake_args("out", "seed=1"));
    assert!(o.status.success(), "{}", stderr(&o));
    let locked = d.join("out/rivers.png");
    let old = std::fs::read(&locked).unwrap();
    let chattr = |flag: &str, p: &Path| Command::new("chattr").arg(flag).arg(p).status();
    if !chattr("+i", &locked).is_ok_and(|s| s.success()) {
        eprintln!("skipped: chattr +i needs root and a file system with attributes");
        return;
    }
    let o = orogen(d, &bake_args("out", "seed=2"));
    let err = stderr(&o);
    // Unlock before asserting, so the temporary folder can always be removed.
    let left: Vec<_> = names(d).into_iter().filter(|n| n != "out").collect();
    for n in &left {
        let _ = chattr("-i", &d.join(n).join("rivers.png"));
    }
    let _ = chattr("-i", &locked);
    assert!(o.status.success(), "{err}");
    let json = std::fs::read_to_string(d.join("out/bake.json")).unwrap();
    assert!(json.contains("\"seed\": 2"), "{json}");
    assert_ne!(std::fs::read(&locked).unwrap(), old);
    // The earlier bake could not be deleted whole; the run says where it is.
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(err.contains(&left[0]), "{err}");
}
