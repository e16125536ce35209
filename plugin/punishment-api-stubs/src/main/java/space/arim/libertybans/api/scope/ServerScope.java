package space.arim.libertybans.api.scope;

public interface ServerScope {}
