//! The services' allocator: mimalloc built with `no_thp` (workspace Cargo.toml).
//!
//! mimalloc 3 otherwise marks its arenas MADV_HUGEPAGE, and a 2 MiB page that is partly in use
//! is never given back: under the benchmark's write load ingest's peak RSS was 102 MiB with
//! huge pages against 84 MiB without.

use mimalloc::MiMalloc;

#[global_allocator]
static ALLOCATOR: MiMalloc = MiMalloc;

/// `AnonHugePages` of this process, in KiB.
fn anon_huge_pages_kib() -> u64 {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").expect("smaps_rollup");
    rollup
        .lines()
        .find_map(|line| line.strip_prefix("AnonHugePages:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .expect("an AnonHugePages line")
}

#[test]
fn the_heap_is_not_backed_by_transparent_huge_pages() {
    let mode =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    // Only in `madvise` mode (Debian's default, and these machines') does the kernel give
    // huge pages exactly to the memory a process asks them for; with `always` it gives them
    // unasked, with `never` not at all, so neither tells the two builds apart.
    if !mode.contains("[madvise]") {
        eprintln!("transparent huge pages are {mode:?}, not madvise: nothing to tell apart");
        return;
    }
    let before = anon_huge_pages_kib();
    // 64 MiB in 1 MiB blocks, every page written: the size of ingest's heap under load.
    let blocks: Vec<Vec<u8>> = (0..64u8).map(|i| vec![i | 1; 1 << 20]).collect();
    let after = anon_huge_pages_kib();
    assert_eq!(
        after.saturating_sub(before),
        0,
        "the allocator's memory came in huge pages ({before} -> {after} KiB AnonHugePages)"
    );
    assert_eq!(blocks.iter().map(Vec::len).sum::<usize>(), 64 << 20);
}
