package dev.warden.plugin.core;

/** One request's worth of records of one kind: the gzip-compressed JSON array and its size. */
public record Batch(RecordKind kind, int count, byte[] gzipBody) {}
