package space.arim.libertybans.api.scope;

public interface ScopeManager {
    ServerScope globalScope();
}
