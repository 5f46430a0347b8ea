/** The reader's root module, as `nest new` names it (src/app.module.ts). */
export declare class AppModule {}
